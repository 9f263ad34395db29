import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import { sql } from 'kysely';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe, startTestService, type ServeNode, type TestService } from '../support/app.ts';
import { paddedPng } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';

// Uploads stream from the socket to storage: a file far larger than the memory a server may spend
// on it goes through, and a file over its kind's limit is cut off as it arrives, leaving nothing
// behind (no row, no stored file, no temporary file).

const MB = 1024 * 1024;
let svc: TestService;
let serve: ServeNode;
let team: Awaited<ReturnType<TestService['team']>>;
/** The team whose uploads are refused: none of its files may be left. */
let refused: Awaited<ReturnType<TestService['team']>>;
let video: Buffer;
let ca: string;

beforeAll(async () => {
  svc = await startTestService({ MAX_INPUT_VIDEO_MB: '1' });
  serve = await spawnServe(svc, { MAX_INPUT_VIDEO_MB: '200' });
  team = await svc.team();
  refused = await svc.team();
  video = await testVideo({ width: 64, height: 64, seconds: 1 });
  ca = await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8');
}, 60_000);
afterAll(async () => {
  if (serve?.running()) {
    serve.child.kill('SIGTERM');
    await serve.waitForExit(10_000);
  }
  await serve?.dispatcher.close();
  await svc?.close();
});

/** A video's bytes followed by zeros up to `total`, made as they are sent: never whole in this process either. */
async function* paddedVideo(total: number): AsyncGenerator<Buffer> {
  yield video;
  const zeros = Buffer.alloc(MB);
  for (let sent = video.length; sent < total; sent += zeros.length) yield zeros.subarray(0, Math.min(zeros.length, total - sent));
}

const memory = async (pid: number) => {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(/(\d+) kB/.exec(status.split('\n').find((l) => l.startsWith(name))!)![1]) * 1024;
  return { rss: kb('VmRSS:'), peak: kb('VmHWM:') };
};
const uploadRows = async () => (await sql<{ n: number }>`select count(*)::int as n from uploads`.execute(svc.app.db)).rows[0]!.n;
/** Every entry of a folder of the storage root, dot-files (content-type sidecars) included. */
const filesUnder = async (dir: string) => fs.readdir(path.join(svc.dataDir, 'files', dir)).catch(() => [] as string[]);

describe('a streamed upload', () => {
  it('of 150 MB goes to storage while the server process grows by far less than the file', async () => {
    const size = 150 * MB;
    // The peak is reset so that only what this upload costs shows (Linux: clear_refs 5).
    await fs.writeFile(`/proc/${serve.pid}/clear_refs`, '5');
    const before = await memory(serve.pid);
    const res = await request(`${serve.baseUrl}/api/v1/uploads`, {
      method: 'POST',
      dispatcher: serve.dispatcher,
      headers: { authorization: `Bearer ${team.key}`, 'content-type': 'application/octet-stream' },
      body: Readable.from(paddedVideo(size), { objectMode: false }),
    });
    const body = JSON.parse(await res.body.text());
    const after = await memory(serve.pid);
    expect(res.statusCode, JSON.stringify(body)).toBe(201);
    expect(body).toMatchObject({ content_type: 'video/mp4', size });
    const key = (await svc.app.db.selectFrom('uploads').select('storage_key').where('id', '=', body.id).executeTakeFirstOrThrow()).storage_key;
    expect((await fs.stat(path.join(svc.dataDir, 'files', key))).size).toBe(size);
    // Held whole, the file alone would add 150 MB (twice that while a Buffer is concatenated); what
    // streaming adds is buffers in flight and garbage not yet collected: about 68 MB here, the same
    // for 40 MB and 190 MB files (measured 2026-11-27).
    expect(after.peak - before.rss, `peak ${after.peak / MB} MB, before ${before.rss / MB} MB`).toBeLessThan(100 * MB);
  }, 120_000);
});

/**
 * Sends an upload over a raw TLS socket, chunked (no length announced) or with Content-Length, and
 * reads what comes back: a refusal may arrive while the body is still being sent.
 */
function sendRaw(opts: { body: AsyncIterable<Buffer>; contentLength?: number; stopAfter?: number; contentType?: string }): Promise<{ status?: number; headers: Record<string, string>; body?: string; failure?: string }> {
  return new Promise((resolve) => {
    const tcp = net.connect({ host: '127.0.0.1', port: Number(new URL(svc.baseUrl).port), allowHalfOpen: true });
    const socket = tls.connect({ socket: tcp, ca, servername: 'localhost' });
    const received: Buffer[] = [];
    let failure: string | undefined;
    socket.on('data', (c: Buffer) => received.push(c));
    socket.once('error', (e: NodeJS.ErrnoException) => (failure ??= e.code ?? e.message));
    socket.once('close', () => resolve({ ...parse(Buffer.concat(received)), ...(failure ? { failure } : {}) }));
    socket.once('secureConnect', async () => {
      const chunked = opts.contentLength === undefined;
      const head = [`POST /api/v1/uploads HTTP/1.1`, 'Host: localhost', `Authorization: Bearer ${refused.key}`, `Content-Type: ${opts.contentType ?? 'application/octet-stream'}`, chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${opts.contentLength}`];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      let sent = 0;
      for await (const data of opts.body) {
        if (socket.destroyed || parse(Buffer.concat(received)).status) break;
        if (opts.stopAfter !== undefined && sent >= opts.stopAfter) {
          socket.destroy();
          return;
        }
        const piece = chunked ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data;
        sent += data.length;
        if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r).once('close', r));
      }
      if (!socket.destroyed && chunked && !parse(Buffer.concat(received)).status) socket.write('0\r\n\r\n');
      // Ending our side before the answer would make the server drop the request unanswered.
      for (let i = 0; i < 200 && !socket.destroyed && !parse(Buffer.concat(received)).status; i++) await new Promise((r) => setTimeout(r, 50));
      if (!socket.destroyed) socket.end();
    });
  });
}

function parse(all: Buffer): { status?: number; headers: Record<string, string>; body?: string } {
  const text = all.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (!text.startsWith('HTTP/1.1 ') || end < 0) return { headers: {} };
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const length = Number(headers['content-length'] ?? 0);
  if (all.length < end + 4 + length) return { headers: {} };
  return { status: Number(statusLine!.split(' ')[1]), headers, body: all.subarray(end + 4, end + 4 + length).toString('utf8') };
}

const BOUNDARY = 'streaming-test-boundary';
const FORM_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** A multipart form of one file part, with or without its closing boundary. */
async function* form(file: AsyncIterable<Buffer>, closed: boolean): AsyncGenerator<Buffer> {
  yield Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="clip.mp4"\r\nContent-Type: video/mp4\r\n\r\n`);
  yield* file;
  if (closed) yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
}

describe('an upload over its limit, or cut off', () => {
  async function expectNothingLeft(rowsBefore: number) {
    expect(await uploadRows()).toBe(rowsBefore);
    expect(await filesUnder(`uploads/${refused.teamId}`)).toEqual([]);
    expect(await filesUnder('.tmp')).toEqual([]);
  }

  it('sent without a length is refused once past the limit, answered (not reset), and leaves nothing', async () => {
    const before = await uploadRows();
    const res = await sendRaw({ body: paddedVideo(20 * MB) });
    expect(res.failure).toBeUndefined();
    expect(res.status).toBe(400);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body!).error).toEqual({ code: 'validation_error', message: 'file: a video upload takes at most 1 MB; this one is larger' });
    await expectNothingLeft(before);
  }, 60_000);

  it('announced with a length over the limit is refused after its first bytes, before the rest is stored', async () => {
    const before = await uploadRows();
    const res = await sendRaw({ body: paddedVideo(3 * MB), contentLength: 3 * MB });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body!).error.message).toBe('file: a video upload takes at most 1 MB; this one is 3 MB');
    await expectNothingLeft(before);
  }, 60_000);

  it('as the one file of a multipart form is refused the same way', async () => {
    const before = await uploadRows();
    const res = await sendRaw({ body: form(paddedVideo(5 * MB), true), contentType: FORM_TYPE });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body!).error.message).toMatch(/video upload takes at most 1 MB/);
    await expectNothingLeft(before);
  }, 60_000);

  it('as a form whose file part never reaches its closing boundary is refused as unreadable, and leaves nothing', async () => {
    const before = await uploadRows();
    const res = await sendRaw({ body: form(paddedVideo(video.length), false), contentType: FORM_TYPE });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body!).error).toEqual({ code: 'validation_error', message: 'file: the multipart form could not be read' });
    await expectNothingLeft(before);
  }, 60_000);

  it('cut off by the client halfway, past the sampled head, stores nothing and leaves no temporary file', async () => {
    const before = await uploadRows();
    const png = await paddedPng(3 * MB);
    async function* pieces(): AsyncGenerator<Buffer> {
      for (let at = 0; at < png.length; at += 64 * 1024) yield png.subarray(at, at + 64 * 1024);
    }
    await sendRaw({ body: pieces(), contentLength: png.length, stopAfter: 2 * MB });
    // The server notices the closed connection on its own time: a truncated file would land then.
    await new Promise((r) => setTimeout(r, 1000));
    for (let i = 0; i < 50 && (await filesUnder('.tmp')).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    await expectNothingLeft(before);
  }, 60_000);
});
