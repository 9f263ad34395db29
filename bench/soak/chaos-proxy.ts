import http from 'node:http';
import type net from 'node:net';

export type ProxyMode = 'ok' | 'fail' | 'slow' | 'vanish';

/**
 * An HTTP hop in front of a fake (a provider, a webhook receiver) that the chaos loop turns bad:
 * `fail` answers 500 to everything, `slow` holds each request `slowMs` before passing it on,
 * `vanish` drops every connection (open ones too), `ok` passes everything through.
 */
export async function startChaosProxy(target: string, opts: { slowMs: number }) {
  let mode: ProxyMode = 'ok';
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    if (mode === 'fail') {
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"detail":"injected failure"}');
      return;
    }
    const forward = () => {
      const url = new URL(req.url ?? '/', target);
      const upstream = http.request(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      req.pipe(upstream);
    };
    if (mode === 'slow') setTimeout(forward, opts.slowMs);
    else forward();
  });
  server.on('connection', (socket) => {
    if (mode === 'vanish') return void socket.destroy();
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    setMode(next: ProxyMode) {
      mode = next;
      if (next === 'vanish') for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
export type ChaosProxy = Awaited<ReturnType<typeof startChaosProxy>>;
