import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { plainRequest } from '../support/plain-http.ts';

const HTTPS_REQUIRED = { error: { code: 'forbidden', message: 'HTTPS is required' } };

describe('plain HTTP on the service port', () => {
  let svc: TestService;
  let host: Awaited<ReturnType<typeof startImageHost>>;
  let key: string;
  beforeAll(async () => {
    svc = await startTestService();
    host = await startImageHost({ '/p.png': sendBytes(await pngBytes(), 'image/png') });
    ({ key } = await svc.team());
  });
  afterAll(async () => {
    await host?.close();
    await svc?.close();
  });

  it('is refused with 403 forbidden "HTTPS is required", whatever the path', async () => {
    for (const path of ['/api/v1/products', '/healthz', '/nowhere', '/files/x.png']) {
      const res = await plainRequest(svc.port, 'GET', path, { authorization: `Bearer ${key}` });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(HTTPS_REQUIRED);
    }
  });

  it('does nothing: a product create over HTTP fetches no image and stores no row', async () => {
    const body = JSON.stringify({ name: 'Mug', description: 'A mug', category: 'kitchen', image_url: host.url('/p.png') });
    const res = await plainRequest(
      svc.port,
      'POST',
      '/api/v1/products',
      { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      body,
    );
    expect(res.status).toBe(403);
    expect(res.body).toEqual(HTTPS_REQUIRED);
    expect(host.hits).toEqual([]);
    const rows = await svc.app.db.selectFrom('products').select('id').execute();
    expect(rows).toEqual([]);
  });

  it('ignores X-Forwarded-Proto unless TRUST_PROXY is set', async () => {
    const res = await plainRequest(svc.port, 'GET', '/api/v1/account/credits', {
      authorization: `Bearer ${key}`,
      'x-forwarded-proto': 'https',
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(HTTPS_REQUIRED);
  });

  it('serves the same port over TLS', async () => {
    const res = await svc.api('GET', '/api/v1/account/credits', { key });
    expect(res.status).toBe(200);
  });
});

describe('behind a TLS proxy (TRUST_PROXY=true)', () => {
  let svc: TestService;
  let key: string;
  beforeAll(async () => {
    svc = await startTestService({ TRUST_PROXY: 'true' });
    ({ key } = await svc.team());
  });
  afterAll(() => svc?.close());

  it('accepts plain HTTP that the proxy marks X-Forwarded-Proto: https', async () => {
    const res = await plainRequest(svc.port, 'GET', '/api/v1/account/credits', {
      authorization: `Bearer ${key}`,
      'x-forwarded-proto': 'https',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ credits_used: 0, credits_limit: 1000, credits_remaining: 1000 });
  });

  it('still refuses plain HTTP without the header, or marked http', async () => {
    for (const headers of [{}, { 'x-forwarded-proto': 'http' }] as Array<Record<string, string>>) {
      const res = await plainRequest(svc.port, 'GET', '/api/v1/account/credits', { authorization: `Bearer ${key}`, ...headers });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(HTTPS_REQUIRED);
    }
  });
});
