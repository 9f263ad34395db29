import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

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
  trustProxy: boolean;
  handler: Handler;
  /** WebSocket upgrades, accepted over TLS only. */
  onUpgrade?: (req: http.IncomingMessage, socket: import('node:stream').Duplex, head: Buffer) => void;
}) {
  const secure = https.createServer({ key: opts.key, cert: opts.cert, minVersion: 'TLSv1.2' }, opts.handler);
  if (opts.onUpgrade) secure.on('upgrade', opts.onUpgrade);
  const plain = http.createServer((req, res) => {
    if (opts.trustProxy && forwardedProto(req) === 'https') return opts.handler(req, res);
    req.resume();
    res.writeHead(403, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(HTTPS_REQUIRED),
      connection: 'close',
    });
    res.end(HTTPS_REQUIRED);
  });
  for (const s of [secure, plain]) {
    s.keepAliveTimeout = 5_000;
    s.headersTimeout = 15_000;
    s.requestTimeout = 120_000;
  }

  const edge = net.createServer((socket) => {
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
    /** For graceful shutdown: stop taking new connections, let open requests finish. */
    closeIdle(): void {
      secure.closeIdleConnections();
      plain.closeIdleConnections();
    },
  };
}

function forwardedProto(req: http.IncomingMessage): string | undefined {
  const raw = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(raw) ? raw[0] : raw)?.split(',')[0];
  return first?.trim().toLowerCase();
}
