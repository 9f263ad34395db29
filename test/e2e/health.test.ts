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
    // Liveness first; then, for operators, who makes what (this setup: the demo renderer for every operation).
    expect(res.body).toMatchObject({ status: 'ok', demo: true });
    expect((res.body as { engines: Array<{ operation: string; engines: string[] }> }).engines.map((e) => e.engines)).toEqual(Array(8).fill(['local']));
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

describe('GET /docs', () => {
  it('is the API reference served from the npm package through this server: no third-party address, a strict policy', async () => {
    const res = await svc.api('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'self';/);
    const sources = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(4);
    expect(sources.every((s) => s.startsWith('/docs/assets/'))).toBe(true);
    for (const s of sources) {
      const asset = await svc.api('GET', s);
      expect(asset.status, s).toBe(200);
      expect(asset.text.length, s).toBeGreaterThan(20);
    }
    const start = await svc.api('GET', '/docs/assets/start.js');
    expect(start.text).toContain("url: '/api/v1/openapi.json'");
    expect((await svc.api('GET', '/docs/assets/package.json')).status).toBe(404);
    expect((await svc.api('GET', '/docs/assets/..%2Fpackage.json')).status).toBe(404);
  });
});
