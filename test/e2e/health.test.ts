import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

describe('GET /healthz', () => {
  it('answers 200 over TLS without a key once the schema is ready', async () => {
    const res = await svc.api('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('GET /api/v1/openapi.json', () => {
  it('serves the OpenAPI document without a key, the same as schema/openapi.json', async () => {
    const { openApiDocument } = await import('../../src/http/rest/openapi.ts');
    const res = await svc.api('GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(openApiDocument());
    // The rest of /api/v1 still wants a key.
    expect((await svc.api('GET', '/api/v1/products')).status).toBe(401);
  });
});
