import type http from 'node:http';

/** The whole request body as bytes. */
export async function readRaw(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The whole request body as text. */
export async function readBody(req: http.IncomingMessage): Promise<string> {
  return (await readRaw(req)).toString('utf8');
}

/** A multipart/form-data body, parsed the way a server's framework would (the WHATWG parser). */
export async function readForm(req: http.IncomingMessage, raw: Buffer): Promise<FormData> {
  return new Request('http://fake/', { method: 'POST', headers: { 'content-type': String(req.headers['content-type'] ?? '') }, body: new Uint8Array(raw) }).formData();
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A provider's result link, `GET /files/<id>.mp4`, answered with the fake's video; false for any other request. */
export function servedVideo(req: http.IncomingMessage, res: http.ServerResponse, url: URL, video: Buffer): boolean {
  if (req.method !== 'GET' || !/^\/files\/[\w-]+\.mp4$/.test(url.pathname)) return false;
  res.writeHead(200, { 'content-type': 'video/mp4' });
  res.end(video);
  return true;
}

/** Starts a fake on a free port of 127.0.0.1; answers its origin (`http://127.0.0.1:PORT`). */
export async function listenOnLoopback(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Stops a fake at once: its kept-alive connections are cut rather than waited for. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
