import net from 'node:net';

/**
 * A TCP hop between the service and its PostgreSQL that a test can cut and restore: the network
 * (or the database host) going away, without stopping the PostgreSQL every test file shares.
 */
export async function startTcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    /** Every open connection reset, and new ones refused, until restore(). */
    async cut(): Promise<void> {
      const closed = new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      server = undefined;
      // close() waits for open connections: they are reset first.
      for (const s of sockets) s.destroy();
      await closed;
    },
    /** Listening again (nothing when it already is). */
    restore: () => (server ? Promise.resolve() : listen()),
    async close(): Promise<void> {
      const closed = new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
