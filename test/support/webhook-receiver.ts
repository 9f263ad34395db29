import http from 'node:http';

export interface ReceivedWebhook {
  raw: Buffer;
  headers: http.IncomingHttpHeaders;
  at: number;
}

/** A customer's webhook endpoint: records the raw bytes it got; its answer is set per test. */
export async function startWebhookReceiver(answer: (res: http.ServerResponse) => void = (res) => res.writeHead(200).end('ok')) {
  const received: ReceivedWebhook[] = [];
  let respond = answer;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ raw: Buffer.concat(chunks), headers: req.headers, at: Date.now() });
      respond(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    setAnswer: (a: typeof answer) => (respond = a),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
