import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';

// A body over the limit is refused while the client is still sending it. The answer must reach
// the client every time: closing the socket on unread bytes resets the connection, and the reset
// throws away the answer the client had not read yet.

const CREATE = '/api/v1/images/text-to-image';
const BODY_BYTES = 20 * 1024 * 1024;
const PIECE = Buffer.alloc(64 * 1024, 'a');
const SLICE = 4 * 1024 * 1024;

let svc: TestService;
let ca: string;
let key: string;

beforeAll(async () => {
  // Enough tokens for every request, so each one reaches the body limit.
  svc = await startTestService({ RATE_LIMIT_TIERS: 'starter=100000:100000' });
  ca = await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8');
  ({ key } = await svc.team({ credits: 1000 }));
});
afterAll(() => svc?.close());

interface Outcome {
  status?: number;
  headers: Record<string, string>;
  body?: string;
  /** How the connection ended before a whole answer was read, if it did. */
  failure?: string;
}

/**
 * Sends a 20 MB JSON body (Content-Length or chunked) as fast as the connection takes it, and
 * looks for an answer only between slices of 4 MiB, as a client that writes large buffers does:
 * once the answer has come it stops sending. A reset while sending (EPIPE, ECONNRESET) is what
 * such a client reports instead of the answer.
 */
function sendOversized(framing: 'content-length' | 'chunked'): Promise<Outcome> {
  return new Promise((resolve) => {
    // Half-open allowed: the server's end of sending does not stop ours (it may still be reading).
    const tcp = net.connect({ host: '127.0.0.1', port: svc.port, allowHalfOpen: true });
    const socket = tls.connect({ socket: tcp, ca, servername: 'localhost' });
    const received: Buffer[] = [];
    let failure: string | undefined;
    let closed = false;
    socket.on('data', (c: Buffer) => received.push(c));
    socket.once('error', (e: NodeJS.ErrnoException) => (failure ??= e.code ?? e.message));
    socket.once('close', () => {
      closed = true;
      resolve({ ...parse(Buffer.concat(received)), ...(failure ? { failure } : {}) });
    });
    socket.once('secureConnect', async () => {
      const framingHeader = framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${BODY_BYTES}`;
      const head = [`POST ${CREATE} HTTP/1.1`, 'Host: localhost', `Authorization: Bearer ${key}`, 'Content-Type: application/json', framingHeader];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      const waitDrain = () => new Promise<void>((r) => {
        const done = () => {
          socket.off('drain', done).off('close', done);
          r();
        };
        socket.on('drain', done).on('close', done);
      });
      // A JSON string that never ends: {"prompt":"aaaa...
      for (let sent = 0; sent < BODY_BYTES && !closed; sent += PIECE.length) {
        if (sent > 0 && sent % SLICE === 0 && parse(Buffer.concat(received)).status) break;
        const data = sent === 0 ? Buffer.concat([Buffer.from('{"prompt":"'), PIECE.subarray(11)]) : PIECE;
        const piece = framing === 'chunked' ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data;
        if (!socket.write(piece)) await waitDrain();
      }
      if (closed) return;
      if (framing === 'chunked' && !parse(Buffer.concat(received)).status) socket.write('0\r\n\r\n');
      socket.end();
    });
  });
}

function parse(all: Buffer): Omit<Outcome, 'failure'> {
  const text = all.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (!text.startsWith('HTTP/1.1 ') || end < 0) return { headers: {} };
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const body = all.subarray(end + 4, end + 4 + Number(headers['content-length'] ?? 0)).toString('utf8');
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

describe('a body over the limit', () => {
  it('is answered 400 "the request body is too large" with Connection: close, 100 of 100 times, with Content-Length or chunked', async () => {
    const outcomes: Outcome[] = [];
    // Ten at a time: quick, and enough in flight for a reset to show.
    for (let batch = 0; batch < 10; batch++) {
      outcomes.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => sendOversized(i % 2 === 0 ? 'content-length' : 'chunked')))));
    }
    const failures = outcomes.filter((o) => o.failure || !o.status).map((o) => o.failure ?? 'closed without an answer');
    expect(failures, 'connections reset or closed without an answer').toEqual([]);
    for (const o of outcomes) {
      expect(o.status).toBe(400);
      expect(JSON.parse(o.body!)).toEqual({ error: { code: 'validation_error', message: 'the request body is too large' } });
      expect(o.headers.connection).toBe('close');
    }
  }, 120_000);
});
