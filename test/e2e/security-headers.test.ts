import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_POLICY, appPolicy, graphiqlPolicy, mediaOrigins } from '../../src/http/security-headers.ts';
import { startTestService, type TestService } from '../support/app.ts';

let svc: TestService;
let key: string;
beforeAll(async () => {
  svc = await startTestService();
  key = (await svc.team()).key;
});
afterAll(() => svc?.close());

const EVERY_ANSWER = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

describe('security headers on every answer', () => {
  const pages: [string, string][] = [
    ['/', appPolicy([])],
    ['/settings/api-keys', appPolicy([])],
    ['/welcome', appPolicy([])],
    ['/graphql', graphiqlPolicy([])],
  ];
  for (const [path, policy] of pages) {
    it(`the page ${path}: a CSP with no inline script and no framing`, async () => {
      const res = await svc.api('GET', path, { headers: { accept: 'text/html' } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers).toMatchObject({ ...EVERY_ANSWER, 'content-security-policy': policy });
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toMatch(/(^|; )script-src 'self'(;|$)/);
      expect(csp).toContain("frame-ancestors 'none'");
      // The HTML itself: every script a file of ours, none inline.
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    });
  }

  const answers: [string, string, Record<string, string>][] = [
    ['GET', '/api/v1/products', { authorization: 'the team key' }],
    ['GET', '/api/v1/products', {}],
    ['GET', '/healthz', {}],
    ['GET', '/api/v1/nowhere', { accept: 'text/html' }],
    ['POST', '/graphql', { 'content-type': 'application/json' }],
    ['GET', '/auth/session', {}],
    ['GET', '/favicon.svg', {}],
  ];
  for (const [method, path, headers] of answers) {
    it(`${method} ${path} (${Object.keys(headers).join(', ') || 'no headers'}): nothing in it may run or be framed`, async () => {
      const withKey = headers.authorization ? { ...headers, authorization: `Bearer ${key}` } : headers;
      const res = await svc.api(method, path, { headers: withKey, ...(method === 'POST' ? { rawBody: '{"query":"{ __typename }"}' } : {}) });
      expect(res.headers).toMatchObject({ ...EVERY_ANSWER, 'content-security-policy': API_POLICY });
    });
  }

  it('the API reference keeps its own policy (Swagger UI styles itself inline), with the other headers', async () => {
    const res = await svc.api('GET', '/docs');
    expect(res.headers).toMatchObject(EVERY_ANSWER);
    expect(String(res.headers['content-security-policy'])).toMatch(/script-src 'self';/);
  });

  it("GraphQL's CORS lets other sites' pages send an API key but never the browser's credentials", async () => {
    const res = await svc.api('OPTIONS', '/graphql', { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' } });
    expect(res.headers['access-control-allow-origin']).toBe('https://evil.example');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('hashed assets are cached for a year, pages revalidated', async () => {
    const page = await svc.api('GET', '/', { headers: { accept: 'text/html' } });
    expect(page.headers['cache-control']).toBe('no-cache');
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(page.text)![1]!;
    const res = await svc.api('GET', asset);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });
});

describe('where media may load from', () => {
  it('only this origin with local storage; the bucket with S3', () => {
    expect(mediaOrigins({ storage: 'local', s3: undefined })).toEqual([]);
    const s3 = { bucket: 'ads', region: 'eu-west-1', accessKeyId: 'a', secretAccessKey: 's' };
    expect(mediaOrigins({ storage: 's3', s3: { ...s3, endpoint: undefined, forcePathStyle: false } })).toEqual(['https://ads.s3.eu-west-1.amazonaws.com', 'https://s3.eu-west-1.amazonaws.com']);
    expect(mediaOrigins({ storage: 's3', s3: { ...s3, endpoint: 'https://minio.example.com:9000', forcePathStyle: true } })).toEqual(['https://minio.example.com:9000']);
    expect(mediaOrigins({ storage: 's3', s3: { ...s3, endpoint: 'https://r2.example.com', forcePathStyle: false } })).toEqual(['https://r2.example.com', 'https://ads.r2.example.com']);
    expect(appPolicy(['https://cdn.example.com'])).toContain("img-src 'self' data: blob: https://cdn.example.com; media-src 'self' blob: https://cdn.example.com");
  });
});
