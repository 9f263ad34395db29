import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, UNLIMITED_RATE, type TestService } from '../support/app.ts';
import { resolveRef } from '../support/schema-arbitrary.ts';
import openapi from '../../schema/openapi.json' with { type: 'json' };

// The server refuses what the OpenAPI document declares it refuses (DESIGN.md decision 24): for
// every operation, every string it takes one character past its maxLength and every array one
// item past its maxItems is a 400 validation_error naming the field, read off the document itself
// so a limit added there is tested here the moment it is declared.

const doc = openapi as Record<string, any>;

let svc: TestService;
let key: string;

beforeAll(async () => {
  // A bucket of 10 for pro teams, so one test empties it; the others are as good as unlimited.
  svc = await startTestService({ RATE_LIMIT_TIERS: UNLIMITED_RATE.replace(/pro=\d+:\d+/, 'pro=60:10') });
  ({ key } = await svc.team({ credits: 1_000_000 }));
});
afterAll(async () => {
  await svc?.close();
});

const schemaOf = (s: any): any => (s?.$ref ? resolveRef(doc, s.$ref) : s);

/** The string or array branch of a property (`anyOf: [T, null]` for the nullable ones). */
function branch(s: any, type: 'string' | 'array'): any {
  const own = schemaOf(s);
  if (own?.type === type) return own;
  return (own?.anyOf ?? []).map(schemaOf).find((b: any) => b?.type === type);
}

/** A body each create route accepts but for the field under test: the document's example, our own where it has none. */
const OWN_BODIES: Record<string, Record<string, unknown>> = {
  '/products': { name: 'Limits', description: 'A product', category: 'test', image_url: 'https://example.com/p.png' },
  '/avatars/custom': { name: 'Limits', image_url: 'https://example.com/p.png' },
  '/ad-library/scrape': { url: 'https://www.facebook.com/ads/library/?view_all_page_id=123456789' },
};

function itemOf(items: any, field: string): unknown {
  const s = schemaOf(items) ?? {};
  if (s.format === 'uuid' || /_ids$/.test(field)) return randomUUID();
  if (/urls$/.test(field)) return 'https://example.com/p.png';
  return 'x';
}

interface Case {
  name: string;
  method: string;
  url: string;
  body?: Record<string, unknown>;
  field: string;
}

const cases: Case[] = [];
for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
  for (const [method, op] of Object.entries(ops)) {
    const params = ((op.parameters ?? []) as any[]).map(schemaOf);
    const url = `/api/v1${path.replace(/\{[^}]+\}/g, () => randomUUID())}`;
    for (const p of params) {
      const max = p.schema?.maxLength;
      if (p.in === 'header' || typeof max !== 'number') continue;
      const long = 'x'.repeat(max + 1);
      if (p.in === 'path') {
        cases.push({ name: `${method.toUpperCase()} ${path}: path ${p.name} of ${max + 1} characters`, method, url: `/api/v1${path.replace(`{${p.name}}`, long).replace(/\{[^}]+\}/g, () => randomUUID())}`, field: p.name });
      } else {
        cases.push({ name: `${method.toUpperCase()} ${path}: query ${p.name} of ${max + 1} characters`, method, url: `${url}?${p.name}=${long}`, field: p.name });
      }
    }
    const bodySchema = schemaOf(op.requestBody?.content?.['application/json']?.schema);
    if (!bodySchema) continue;
    const valid = op.requestBody.content['application/json'].example ?? OWN_BODIES[path.replace(/^\/quotes/, '')];
    for (const [field, prop] of Object.entries((bodySchema.properties ?? {}) as Record<string, any>)) {
      const str = branch(prop, 'string');
      if (typeof str?.maxLength === 'number') {
        const max: number = str.maxLength;
        cases.push({ name: `${method.toUpperCase()} ${path}: ${field} of ${max + 1} characters`, method, url, body: { ...valid, [field]: 'x'.repeat(max + 1) }, field });
        // Longer than declared only by the spaces around it: counted as sent, not after trimming.
        if (max >= 2) cases.push({ name: `${method.toUpperCase()} ${path}: ${field} of ${max + 1} characters with spaces around`, method, url, body: { ...valid, [field]: ` ${'x'.repeat(max - 1)} ` }, field });
      }
      const arr = branch(prop, 'array');
      if (typeof arr?.maxItems === 'number') {
        const items = Array.from({ length: arr.maxItems + 1 }, () => itemOf(arr.items, field));
        cases.push({ name: `${method.toUpperCase()} ${path}: ${field} of ${arr.maxItems + 1} items`, method, url, body: { ...valid, [field]: items }, field });
      }
    }
  }
}

describe('every limit the OpenAPI document declares is enforced', () => {
  it('finds the limits in the document (strings, arrays, query and path parameters)', () => {
    expect(cases.length).toBeGreaterThan(100);
    for (const field of ['prompt', 'script', 'name', 'text', 'video_url', 'product_ids', 'reference_image_urls', 'id', 'since']) {
      expect(cases.some((c) => c.field === field), field).toBe(true);
    }
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s is a 400 naming the field', async (_name, c) => {
    const res = await svc.api(c.method.toUpperCase(), c.url, { key, ...(c.body ? { body: c.body } : {}) });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.message).toMatch(new RegExp(`^(\\S+\\.)?${c.field}: `));
    expectDeclaredHeaders(c.method, c.url, res);
  });
});

/** The headers the document declares for this operation's answer are all sent. */
function expectDeclaredHeaders(method: string, url: string, res: { status: number; headers: Record<string, unknown> }): void {
  const path = url.replace(/^\/api\/v1/, '').replace(/\?.*$/, '');
  const [template, ops] = Object.entries(doc.paths as Record<string, Record<string, any>>).find(([t]) => new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path))!;
  const declared = Object.keys(ops[method.toLowerCase()].responses[String(res.status)]?.headers ?? {}).filter((h) => h !== 'Idempotent-Replayed');
  expect(declared.length, `${method} ${template} ${res.status} declares its headers`).toBeGreaterThan(0);
  for (const h of declared) expect(res.headers[h.toLowerCase()], `${method} ${template} ${res.status}: ${h}`).toBeDefined();
}

describe('the rate-limit headers the document declares are sent', () => {
  it('on a 200, a 404, a 402 and, once the bucket is empty, a 429 with Retry-After; none on a 401', async () => {
    const ok = await svc.api('GET', '/api/v1/account/credits', { key });
    expect(ok.status).toBe(200);
    expectDeclaredHeaders('GET', '/api/v1/account/credits', ok);
    const missing = await svc.api('GET', `/api/v1/products/${randomUUID()}`, { key });
    expect(missing.status).toBe(404);
    expectDeclaredHeaders('GET', '/api/v1/products/x', missing);
    const poor = await svc.team({ credits: 0 });
    const { brand_id: _b, product_ids: _p, ...image } = doc.paths['/images/text-to-image'].post.requestBody.content['application/json'].example;
    const refused = await svc.api('POST', '/api/v1/images/text-to-image', { key: poor.key, body: image });
    expect(refused.status, refused.text).toBe(402);
    expectDeclaredHeaders('POST', '/api/v1/images/text-to-image', refused);
    const unknown = await svc.api('GET', '/api/v1/account/credits', { key: `service_sk_${'0'.repeat(38)}` });
    expect(unknown.status).toBe(401);
    expect(Object.keys(doc.paths['/account/credits'].get.responses['401'].headers ?? {})).toEqual([]);

    const { key: busy } = await svc.team({ tier: 'pro' });
    let last = await svc.api('POST', '/api/v1/products', { key: busy, body: {} });
    for (let i = 0; i < 10 && last.status !== 429; i++) last = await svc.api('POST', '/api/v1/products', { key: busy, body: {} });
    expect(last.status).toBe(429);
    expectDeclaredHeaders('POST', '/api/v1/products', last);
    expect(Number(last.headers['retry-after'])).toBeGreaterThanOrEqual(0);
  });
});
