import http from 'node:http';
import sharp from 'sharp';

export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A stand-in for the public image hosts users link to: routes are set per test. */
export async function startImageHost(routes: Record<string, Route> = {}) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const route = routes[(req.url ?? '').split('?')[0]!];
    if (route) return route(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    port,
    hits,
    routes,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const sendBytes =
  (bytes: Buffer, contentType: string, opts: { contentLength?: boolean } = {}): Route =>
  (_req, res) => {
    const headers: Record<string, string | number> = { 'content-type': contentType };
    if (opts.contentLength !== false) headers['content-length'] = bytes.length;
    res.writeHead(200, headers);
    res.end(bytes);
  };

export function pngBytes(width = 64, height = 64, color = '#3366cc'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } }).png().toBuffer();
}

/** A real PNG header followed by padding: sniffed as an image, and exactly `size` bytes long. */
export async function paddedPng(size: number): Promise<Buffer> {
  const png = await pngBytes(8, 8);
  const out = Buffer.alloc(size);
  png.copy(out);
  return out;
}
