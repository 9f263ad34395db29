import type { FastifyInstance } from 'fastify';
import { SpanKind, SpanStatusCode, context, trace } from '../observability/tracing.ts';
import type { Span } from '@opentelemetry/api';

declare module 'fastify' {
  interface FastifyRequest {
    span?: Span;
  }
}

/**
 * A server span per request, named by its route's pattern, active for everything the request
 * does (the rest of its hooks and its handler run inside the context set here). Registered only
 * when tracing is on.
 */
export function traceHttp(fastify: FastifyInstance): void {
  fastify.decorateRequest('span', undefined);
  fastify.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const span = trace.getTracer('adforge').startSpan(`${request.method} ${route}`, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': request.method, 'http.route': route, 'url.path': request.url.split('?')[0]!, 'adforge.request_id': request.id },
    });
    request.span = span;
    context.with(trace.setSpan(context.active(), span), done);
  });
  fastify.addHook('onResponse', async (request, reply) => {
    const span = request.span;
    if (!span) return;
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
}
