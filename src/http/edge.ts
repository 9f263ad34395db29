import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { peerTrust, type TrustProxy } from './trust-proxy.ts';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const TLS_HANDSHAKE = 0x16;
const HTTPS_REQUIRED = JSON.stringify({ error: { code: 'forbidden', message: 'HTTPS is required' } });

/**
 * One port for both: the first byte of a connection tells a TLS handshake from plain HTTP.
 * Plain HTTP is answered 403 without reaching the application, unless a trusted TLS proxy
 * says (X-Forwarded-Proto: https) that the client's leg was encrypted.
 */
export function createEdge(opts: {
  key: string;
  cert: string;
  trustProxy: TrustProxy;
  handler: Handler;
  /** WebSocket upgrades, accepted over TLS only. */
  onUpgrade?: (req: http.IncomingMessage, socket: import('node:stream').Duplex, head: Buffer) => void;
}) {
  let draining = false;
  const fromProxy = peerTrust(opts.trustProxy);
  const open = new Set<http.ServerResponse>();
  // While draining, every answer not yet begun ends its connection (Connection: close), so
  // keep-alive clients go elsewhere.
  const handler: Handler = (req, res) => {
    lingerIfAnsweredEarly(req);
    if (draining) res.shouldKeepAlive = false;
    open.add(res);
    res.once('close', () => open.delete(res));
    opts.handler(req, res);
  };
  const secure = https.createServer({ key: opts.key, cert: opts.cert, minVersion: 'TLSv1.2' }, handler);
  if (opts.onUpgrade) secure.on('upgrade', opts.onUpgrade);
  const plain = http.createServer((req, res) => {
    if (fromProxy(req) && forwardedProto(req) === 'https') return handler(req, res);
    lingerIfAnsweredEarly(req);
    req.resume();
    res.writeHead(403, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(HTTPS_REQUIRED),
      connection: 'close',
    });
    res.end(HTTPS_REQUIRED);
  });
  for (const s of [secure, plain]) {
    s.on('clientError', answerMalformed);
    s.keepAliveTimeout = 5_000;
    s.headersTimeout = 15_000;
    s.requestTimeout = 120_000;
  }

  const sockets = new Set<net.Socket>();
  const edge = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.setTimeout(15_000, () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(first);
      (first[0] === TLS_HANDSHAKE ? secure : plain).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
    socket.on('error', () => socket.destroy());
  });

  return {
    listen(port: number, host: string): Promise<number> {
      return new Promise((resolve, reject) => {
        edge.once('error', reject);
        edge.listen(port, host, () => {
          edge.off('error', reject);
          const addr = edge.address();
          resolve(typeof addr === 'object' && addr ? addr.port : port);
        });
      });
    },
    async close(): Promise<void> {
      const closed = new Promise<void>((resolve) => edge.close(() => resolve()));
      secure.closeAllConnections();
      plain.closeAllConnections();
      await closed;
    },
    /**
     * Graceful shutdown: no new connection is accepted; requests already received finish and close
     * their connection; idle keep-alive connections close at once. Whatever is still open after
     * graceMs is cut.
     */
    async drain(graceMs: number): Promise<void> {
      draining = true;
      for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
      const closed = new Promise<void>((resolve) => edge.close(() => resolve()));
      const closeIdle = () => {
        secure.closeIdleConnections();
        plain.closeIdleConnections();
      };
      closeIdle();
      // A connection becomes idle when its answer is sent: swept until none is left.
      const sweep = setInterval(closeIdle, 50);
      const cut = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      try {
        await closed;
      } finally {
        clearInterval(sweep);
        clearTimeout(cut);
      }
    },
  };
}

/**
 * How long and how much of a refused body is still read after its answer (a lingering close).
 * An answer that ends the connection while the client is still sending (a body over the limit,
 * refused before it was read) would otherwise close the socket on unread bytes: the kernel then
 * resets the connection, and the reset throws away the answer the client had not read yet.
 */
export const LINGER = { ms: 10_000, bytes: 64 * 1024 * 1024 };

const LINGERS = Symbol('lingers');
const READING = Symbol('request being read');
type LingeringSocket = Duplex & { destroySoon?: () => void; [LINGERS]?: true; [READING]?: http.IncomingMessage };

/**
 * Node ends a connection after an answer that says `Connection: close` with the socket's
 * destroySoon (end, then destroy once the answer is written). On a socket whose request body has
 * not all arrived, it half-closes instead: the answer and our end of sending go out, and the rest
 * of the body is read and dropped until the client ends its side, LINGER.ms pass or LINGER.bytes
 * more arrive; then the socket is destroyed.
 */
function lingerIfAnsweredEarly(req: http.IncomingMessage): void {
  const socket = req.socket as LingeringSocket;
  socket[READING] = req;
  if (socket[LINGERS] || typeof socket.destroySoon !== 'function') return;
  socket[LINGERS] = true;
  const destroySoon = socket.destroySoon;
  socket.destroySoon = function (this: LingeringSocket) {
    const reading = this[READING];
    if (!reading || reading.complete || this.destroyed) return destroySoon.call(this);
    let dropped = 0;
    const stop = () => {
      clearTimeout(timer);
      reading.off('data', drop);
      this.destroy();
    };
    const drop = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > LINGER.bytes) stop();
    };
    const timer = setTimeout(stop, LINGER.ms);
    timer.unref();
    reading.on('data', drop);
    reading.resume();
    this.once('close', () => clearTimeout(timer));
    // Their end of sending: both sides are done once the answer is written.
    this.once('end', () => (this.writableFinished ? stop() : this.once('finish', stop)));
    this.end();
  };
}

/**
 * What Node's parser refused (bad bytes, a lying or doubled Content-Length, both Content-Length and
 * chunked, headers too large, too slow) is answered in the API's error shape, not Node's bare 400.
 */
const ANSWERED = Symbol('answered malformed');

function answerMalformed(err: Error & { code?: string }, socket: Duplex & { [ANSWERED]?: true }): void {
  // The parser reports again for every later chunk of the same connection: it was answered once.
  if (socket[ANSWERED]) return;
  socket[ANSWERED] = true;
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'the request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'the request did not arrive in time']
        : [400, 'Bad Request', 'malformed HTTP request: the request line, a header or the body framing is invalid'];
  const body = JSON.stringify({ error: { code: 'validation_error', message } });
  // What the client is still sending is read and dropped for a moment: closing on unread data
  // would reset the connection and the client would never see the answer.
  socket.resume();
  setTimeout(() => socket.destroy(), 2_000).unref();
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `x-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`,
  );
}

function forwardedProto(req: http.IncomingMessage): string | undefined {
  const raw = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(raw) ? raw[0] : raw)?.split(',')[0];
  return first?.trim().toLowerCase();
}
