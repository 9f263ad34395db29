import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError, errorStatus, type ErrorCode } from '../../src/domain/errors.ts';
import { installErrorHandling } from '../../src/http/errors.ts';

const CODES = Object.keys(errorStatus) as ErrorCode[];

/** A bare app shaped like src/http/server.ts: no text/plain parser, request ids echoed, our error handling. */
function buildTestApp(): FastifyInstance {
  const app = Fastify({ bodyLimit: 100, genReqId: () => randomUUID() });
  app.removeContentTypeParser('text/plain');
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorHandling(app);

  app.get<{ Params: { code: ErrorCode } }>('/app-error/:code', async (request) => {
    throw new AppError(request.params.code, `message for ${request.params.code}`);
  });
  app.get('/rate-limited', async () => {
    throw new AppError('rate_limited', 'too many scrape requests', { 'Retry-After': '42' });
  });
  app.get('/unexpected', async () => {
    throw new Error('secret detail');
  });
  app.get('/unexpected-sync', () => {
    throw new Error('secret detail');
  });
  app.get('/unexpected-syntax', async () => {
    // e.g. JSON.parse of a corrupt upstream or stored document: a server fault, not a client one.
    return JSON.parse('{"secret detail"') as unknown;
  });
  app.get('/unexpected-with-status', async () => {
    // e.g. an HTTP client error that carries the upstream's status code.
    throw Object.assign(new Error('upstream said: secret detail'), { statusCode: 404 });
  });
  app.get('/throws-string', async () => {
    throw 'secret detail';
  });
  app.get('/throws-null', async () => {
    throw null;
  });
  app.post('/echo', async (request) => ({ received: request.body }));
  return app;
}

let app: FastifyInstance;
beforeEach(async () => {
  app = buildTestApp();
  await app.ready();
});
afterEach(async () => {
  await app.close();
});

const jsonPost = (payload: string, contentType = 'application/json') =>
  app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': contentType }, payload });

function expectInternalError(res: { statusCode: number; body: string; headers: Record<string, unknown> }): void {
  expect(res.statusCode).toBe(500);
  const body = JSON.parse(res.body) as { error: { code: string; message: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
  expect(body.error.code).toBe('internal_error');
  const requestId = res.headers['x-request-id'];
  expect(typeof requestId).toBe('string');
  expect(body.error.message).toContain(requestId as string);
  expect(res.body).not.toContain('secret detail');
  expect(res.body).not.toMatch(/\bat .*\(|\.ts:\d+|node:internal|stack/i);
}

describe('AppError responses', () => {
  it.each(CODES)('answers %s with its status and exactly {error:{code,message}}', async (code) => {
    const res = await app.inject({ method: 'GET', url: `/app-error/${code}` });
    expect(res.statusCode).toBe(errorStatus[code]);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toStrictEqual({ error: { code, message: `message for ${code}` } });
  });

  it('maps the codes to the statuses of the API contract (and ours: 503 while the database is away, DESIGN decision 18)', () => {
    expect(errorStatus).toEqual({
      validation_error: 400,
      unauthorized: 401,
      insufficient_credits: 402,
      forbidden: 403,
      not_found: 404,
      conflict: 409,
      rate_limited: 429,
      internal_error: 500,
      external_service_error: 502,
      service_unavailable: 503,
    });
  });

  it('sends the AppError headers, e.g. Retry-After on rate_limited', async () => {
    const res = await app.inject({ method: 'GET', url: '/rate-limited' });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('42');
    expect(res.json()).toStrictEqual({ error: { code: 'rate_limited', message: 'too many scrape requests' } });
  });
});

describe('unexpected errors', () => {
  it('answer 500 internal_error naming the request id, without the error message or a stack trace', async () => {
    expectInternalError(await app.inject({ method: 'GET', url: '/unexpected' }));
  });

  it('answer the same when thrown synchronously', async () => {
    expectInternalError(await app.inject({ method: 'GET', url: '/unexpected-sync' }));
  });

  it('answer the same for a thrown non-Error value', async () => {
    expectInternalError(await app.inject({ method: 'GET', url: '/throws-string' }));
  });

  it('answer the same for a thrown null', async () => {
    expectInternalError(await app.inject({ method: 'GET', url: '/throws-null' }));
  });

  it('answer the same for a SyntaxError raised inside a handler (not a request-body problem)', async () => {
    expectInternalError(await app.inject({ method: 'GET', url: '/unexpected-syntax' }));
  });

  it('answer the same for a non-Fastify error that happens to carry a 4xx statusCode', async () => {
    expectInternalError(await app.inject({ method: 'GET', url: '/unexpected-with-status' }));
  });

  it('name a different request id on each request', async () => {
    const a = await app.inject({ method: 'GET', url: '/unexpected' });
    const b = await app.inject({ method: 'GET', url: '/unexpected' });
    expect(a.json().error.message).not.toBe(b.json().error.message);
  });
});

describe('unknown routes', () => {
  it('answer 404 not_found for an unknown path, without echoing the query string', async () => {
    const res = await app.inject({ method: 'GET', url: '/no/such/route?token=secret' });
    expect(res.statusCode).toBe(404);
    const body = res.json() as { error: { code: string; message: string } };
    expect(body).toStrictEqual({ error: { code: 'not_found', message: body.error.message } });
    expect(body.error.message).toContain('/no/such/route');
    expect(body.error.message).not.toContain('secret');
  });

  it.each(['DELETE', 'PUT', 'PATCH', 'POST'] as const)('answer 404 not_found for %s on a GET-only route', async (method) => {
    const res = await app.inject({ method, url: '/unexpected' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
  });

  it('answer 404 not_found for a method no route uses', async () => {
    const res = await app.inject({ method: 'PROPFIND', url: '/echo' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
  });
});

describe('request bodies', () => {
  it('pass a valid JSON body through', async () => {
    const res = await jsonPost('{"a":1}');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ received: { a: 1 } });
  });

  it.each(['{bad', '{"a":1', '{"a":1}}', "{'a':1}", 'undefined', '[1,]'])('refuse malformed JSON %j with 400 validation_error', async (payload) => {
    const res = await jsonPost(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toStrictEqual({ error: { code: 'validation_error', message: 'the request body is not valid JSON' } });
  });

  it('refuse a prototype-poisoning body with 400 validation_error', async () => {
    const res = await jsonPost('{"__proto__":{"admin":true}}');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('validation_error');
  });

  it('refuse a text/plain body with 400 validation_error', async () => {
    const res = await jsonPost('{"a":1}', 'text/plain');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toStrictEqual({ error: { code: 'validation_error', message: 'Content-Type must be application/json' } });
  });

  it('refuse other non-JSON content types with 400 validation_error', async () => {
    for (const contentType of ['application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      const res = await jsonPost('a=1', contentType);
      expect(res.statusCode, contentType).toBe(400);
      expect(res.json().error.code).toBe('validation_error');
    }
  });

  it('refuse an empty JSON body with 400 validation_error', async () => {
    const res = await jsonPost('');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toStrictEqual({ error: { code: 'validation_error', message: 'the request body is empty; send a JSON object' } });
  });

  it('refuse a body over the limit with 400 validation_error', async () => {
    const res = await jsonPost(JSON.stringify({ text: 'x'.repeat(200) }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toStrictEqual({ error: { code: 'validation_error', message: 'the request body is too large' } });
  });

  it('accept a body exactly at the limit', async () => {
    const payload = JSON.stringify({ t: 'x'.repeat(92) });
    expect(Buffer.byteLength(payload)).toBe(100);
    const res = await jsonPost(payload);
    expect(res.statusCode).toBe(200);
  });
});
