import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errorStatus, type ErrorCode } from '../domain/errors.ts';
import { isDatabaseUnavailable } from '../domain/database-unavailable.ts';

// Fastify's own failures (parsing, content type, body size) translated to the spec's codes.
// Anything else that reaches the handler (thrown by our code or a library) is an internal error,
// whatever status-like fields it carries.
function fromFastify(e: FastifyError): AppError | null {
  if (typeof e !== 'object' || e === null) return null;
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('validation_error', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('validation_error', 'the request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('validation_error', 'the request body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('validation_error', 'the request body is too large');
  }
  if (typeof e.code !== 'string' || !e.code.startsWith('FST_')) return null;
  if (e.statusCode === 400 && /JSON/i.test(e.message)) {
    return new AppError('validation_error', 'the request body is not valid JSON');
  }
  const status = e.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code = (Object.keys(errorStatus) as ErrorCode[]).find((c) => errorStatus[c] === status) ?? 'validation_error';
    return new AppError(code, e.message);
  }
  return null;
}

/** Answers a request for one of the dashboard's pages; undefined when the request is not for a page. */
export type PageFallback = (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;

export function installErrorHandling(app: FastifyInstance, pageFallback?: PageFallback): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = error instanceof AppError ? error : fromFastify(error);
    if (known) {
      if (known.status >= 500) request.log.error({ err: error }, 'request failed');
      return reply.status(known.status).headers(known.headers).send(known.toBody());
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      return reply.status(503).headers({ 'retry-after': '5' }).send(new AppError('service_unavailable', 'The database is unreachable for now: retry in a few seconds').toBody());
    }
    request.log.error({ err: error }, 'internal error');
    return reply
      .status(500)
      .send(new AppError('internal_error', `Internal server error (request id ${request.id})`).toBody());
  });

  app.setNotFoundHandler((request, reply) => {
    const page = pageFallback?.(request, reply);
    if (page) return page;
    const path = request.url.split('?')[0];
    return reply
      .status(404)
      .send(new AppError('not_found', `No route for ${request.method} ${path}`).toBody());
  });
}
