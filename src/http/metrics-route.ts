import http from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { isLoopbackHost } from '../config.ts';
import type { Metrics } from '../observability/metrics.ts';

/** Every answer counted by its route's pattern (never the raw URL: ids would make a series each). */
export function instrumentHttp(fastify: FastifyInstance, metrics: Metrics): void {
  fastify.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.http.requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    metrics.http.duration.observe({ route, method: request.method }, reply.elapsedTime / 1000);
  });
}

const tokenMatches = (header: string | undefined, token: string): boolean => {
  const got = Buffer.from(/^Bearer +(\S+)$/i.exec(header ?? '')?.[1] ?? '');
  const want = Buffer.from(token);
  return got.length === want.length && timingSafeEqual(got, want);
};

/** GET /metrics on the main (HTTPS) port, only with METRICS_TOKEN as a bearer token; without the setting there is no such route. */
export function registerMetricsRoute(fastify: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  if (!token) return;
  fastify.get('/metrics', async (request, reply) => {
    if (!tokenMatches(request.headers.authorization, token)) {
      return reply.status(401).send({ error: { code: 'unauthorized', message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>' } });
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

/**
 * The metrics listener of METRICS_PORT: plain HTTP, loopback by default (METRICS_HOST), for a
 * Prometheus on the same host or network namespace; every process (server or worker) has one.
 * Off loopback (a container's 0.0.0.0) it answers only with METRICS_TOKEN as a bearer token.
 */
export async function startMetricsListener(
  metrics: Metrics,
  opts: { host: string; port: number; token?: string | undefined },
): Promise<{ port: number; close: () => Promise<void> }> {
  const token = isLoopbackHost(opts.host) ? undefined : opts.token;
  if (!isLoopbackHost(opts.host) && !token) {
    throw new Error(`METRICS_HOST=${opts.host} is not a loopback address: the metrics listener needs METRICS_TOKEN`);
  }
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    if (token && !tokenMatches(req.headers.authorization, token)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('GET /metrics needs Authorization: Bearer <METRICS_TOKEN>\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(e as Error).message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(e.code === 'EADDRINUSE' ? new Error(`METRICS_PORT ${opts.port} on ${opts.host} is taken by another program: choose another METRICS_PORT (0 turns the listener off)`) : e),
    );
    server.listen(opts.port, opts.host, () => resolve());
  });
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : opts.port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
