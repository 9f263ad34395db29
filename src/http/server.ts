import { pickServices } from '../service-factories.ts';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { App } from '../app.ts';
import type { LocalStorage } from '../adapters/storage/local.ts';
import type { S3Storage } from '../adapters/storage/s3.ts';
import { createEdge } from './edge.ts';
import { installErrorHandling } from './errors.ts';
import { installSecurityHeaders } from './security-headers.ts';
import { refuseDoubledHeaders } from './request-guards.ts';
import { instrumentHttp, registerMetricsRoute } from './metrics-route.ts';
import { traceHttp } from './tracing-hooks.ts';
import { registerWebApp } from './web-app-route.ts';
import { registerFileRoutes } from './files-route.ts';
import { registerApiDocs } from './docs-route.ts';
import { registerAuthRoutes } from './dashboard/auth-routes.ts';
import { registerDashboardUploads } from './dashboard/upload-route.ts';
import { registerRestV1 } from './rest/v1/index.ts';
import { registerVoicePreviewRoute } from './voice-preview-route.ts';
import { registerProviderHooks } from './provider-hooks-route.ts';
import { createGraphqlHandler } from './graphql/yoga.ts';
import { followKeyRevocations } from '../services/key-revocations.ts';
import { loadTls } from './tls.ts';
import { fastifyTrustProxy } from './trust-proxy.ts';
import { anyDemo, DEMO_HOW_TO } from '../domain/who-makes-what.ts';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** The Fastify application without a listener: the edge feeds it requests that arrived over TLS. */
export async function buildHttpApp(app: App, extra: { graphql?: ReturnType<typeof createGraphqlHandler> } = {}): Promise<{ fastify: FastifyInstance; handler: Handler }> {
  let handler: Handler | undefined;
  const fastify = Fastify({
    loggerInstance: app.log as FastifyBaseLogger,
    trustProxy: fastifyTrustProxy(app.config.trustProxy),
    genReqId: () => randomUUID(),
    serverFactory: (h) => {
      handler = h;
      // Fastify wants a server object; connections reach it only through the edge.
      return http.createServer(h);
    },
  });
  fastify.removeContentTypeParser('text/plain');
  fastify.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installSecurityHeaders(fastify, app.config);
  refuseDoubledHeaders(fastify);
  instrumentHttp(fastify, app.metrics);
  if (app.tracing.enabled) traceHttp(fastify);
  registerMetricsRoute(fastify, app.metrics, app.config.metrics.token);
  installErrorHandling(fastify, await registerWebApp(fastify, app.config));

  // Liveness: the process answers. Whether it can work now (the database, migrations, the worker) is /readyz.
  // For operators it also says which engine makes each operation, and `demo` when some are drawn by
  // the built-in renderer (not AI): engine names only, no key or address.
  const operations = app.services.engineStatus.operations();
  const demo = anyDemo(operations);
  fastify.get('/healthz', (_req, reply) => reply.send({ status: 'ok', demo, ...(demo ? { demo_note: DEMO_HOW_TO } : {}), engines: operations }));
  // Readiness for a balancer or an orchestrator: 503 while this process cannot do its work.
  fastify.get('/readyz', async (_req, reply) => {
    const { ready, checks } = await app.services.readiness.check();
    reply.header('cache-control', 'no-store');
    if (ready) return reply.send({ status: 'ready', checks });
    const reasons = Object.entries(checks).filter(([, v]) => v !== 'ok').map(([k, v]) => `${k}: ${v}`);
    return reply.status(503).header('retry-after', '5').send({ error: { code: 'service_unavailable', message: `Not ready: ${reasons.join('; ')}` }, checks });
  });
  registerFileRoutes(fastify, { storage: app.storage as LocalStorage | S3Storage, whyGone: (key) => app.services.retention.whyGone(key) });
  registerVoicePreviewRoute(fastify, app.services.voices);
  await registerProviderHooks(fastify, app.runners.upstream);
  // The contract and its reference page need no key: outside the API's authenticated scope.
  registerApiDocs(fastify);
  registerAuthRoutes(fastify, app.services.sessions);
  await registerDashboardUploads(fastify, { services: pickServices(app.services, ['sessions', 'rateLimiter', 'uploads']), rateLimits: app.config.rateLimits });
  await fastify.register(registerRestV1(app), { prefix: '/api/v1' });
  if (extra.graphql) await fastify.register(extra.graphql.register);
  await fastify.ready();
  return { fastify, handler: handler! };
}

export interface HttpServer {
  port: number;
  fastify: FastifyInstance;
  /** Everything stops at once (tests, a failed start). */
  close: () => Promise<void>;
  /** SIGTERM: subscriptions are told to go away, no new connection is taken, open requests get graceMs to finish. */
  drain: (graceMs: number) => Promise<void>;
}

export async function startHttpServer(app: App, opts: { port?: number; host?: string } = {}): Promise<HttpServer> {
  const tls = await loadTls(app.config);
  const graphql = createGraphqlHandler(app, app.events);
  const ws = graphql.websocket();
  // Subscriptions whose key or session ends, on any node, end here too.
  await ws.live.start();
  const { fastify, handler } = await buildHttpApp(app, { graphql });
  const edge = createEdge({ key: tls.key, cert: tls.cert, trustProxy: app.config.trustProxy, handler, onUpgrade: ws.handleUpgrade });
  const port = await edge.listen(opts.port ?? app.config.port, opts.host ?? app.config.host);
  // Keys revoked on any node leave this one's key cache at once.
  const stopFollowing = await followKeyRevocations(app.events, app.services.keyCache);
  const flushKeyUsage = () => app.services.keyUsage.flush().catch((err: unknown) => app.log.warn({ err }, 'could not record when keys were last used'));
  const usageTimer = setInterval(flushKeyUsage, 10_000).unref();
  const stop = async (closeConnections: () => Promise<void>) => {
    await ws.close();
    await ws.live.stop();
    await closeConnections();
    await stopFollowing();
    clearInterval(usageTimer);
    await flushKeyUsage();
    await fastify.close();
  };
  return {
    port,
    fastify,
    close: () => stop(() => edge.close()),
    drain: (graceMs) => stop(() => edge.drain(graceMs)),
  };
}
