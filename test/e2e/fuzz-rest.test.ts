import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type ApiResponse, type TestService } from '../support/app.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { queryValueArbitrary, resolveRef, schemaArbitrary } from '../support/schema-arbitrary.ts';
import openapi from '../../schema/openapi.json' with { type: 'json' };

// Property-based: every operation of the OpenAPI document gets bodies, path ids and query strings
// generated from its own schemas (and plenty that are not). Never a 5xx; every answer is one the
// document lists, in its shape (svc.api checks each against the document); a refused request
// changes nothing that is stored or charged.

const doc = openapi as Record<string, any>;
const RUNS = Number(process.env.FUZZ_RUNS ?? 12);

let svc: TestService;
let key: string;
let host: Awaited<ReturnType<typeof startImageHost>>;

beforeAll(async () => {
  host = await startImageHost({ '/p.png': sendBytes(await pngBytes(), 'image/png') });
  svc = await startTestService();
  ({ key } = await svc.team({ credits: 1_000_000 }));
});
afterAll(async () => {
  await svc?.close();
  await host?.close();
});

/**
 * A body the route accepts: the document's example, its links pointing at the local image host
 * (images) or at a closed port (video, audio); our own for the routes without one.
 */
function validBody(path: string, op: any): Record<string, unknown> | undefined {
  const own: Record<string, Record<string, unknown>> = {
    '/products': { name: 'Fuzzed', description: 'A product', category: 'test', image_url: 'IMAGE' },
    '/avatars/custom': { name: 'Fuzzed', image_url: 'IMAGE' },
    '/ad-library/scrape': { url: 'https://www.facebook.com/ads/library/?view_all_page_id=123456789' },
  };
  const example = op.requestBody?.content?.['application/json']?.example ?? own[path.replace(/^\/quotes/, '')];
  if (!example) return undefined;
  const links = (k: string, v: unknown): unknown => {
    if (Array.isArray(v)) return v.map((x) => links(k, x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([kk, vv]) => [kk, links(kk, vv)]));
    if (typeof v === 'string' && /(^|_)(url|urls)$/.test(k)) return /image|reference/.test(k) ? host.url('/p.png') : 'http://127.0.0.1:9/media';
    return v;
  };
  return links('', example) as Record<string, unknown>;
}

/** The valid body with one property replaced by a fuzzed value of its schema, or removed. */
function nearlyValid(valid: Record<string, unknown>, schema: any): fc.Arbitrary<unknown> {
  const resolved = schema.$ref ? resolveRef(doc, schema.$ref) : schema;
  const keys = Object.keys({ ...valid, ...(resolved.properties ?? {}) });
  return fc.tuple(fc.constantFrom(...keys), fc.boolean()).chain(([k, drop]) =>
    drop ? fc.constant(Object.fromEntries(Object.entries(valid).filter(([kk]) => kk !== k))) : schemaArbitrary(resolved.properties?.[k] ?? {}, doc, k).map((v) => ({ ...valid, [k]: v })),
  );
}

/** What a request may leave behind: charges, rows and queued jobs. */
async function stored(): Promise<Record<string, number>> {
  const { rows } = await sql<Record<string, number>>`select
      (select coalesce(sum(credits_used), 0) from teams)::int as credits_used,
      (select count(*) from credit_ledger)::int as ledger,
      (select count(*) from generations)::int as generations,
      (select count(*) from products)::int as products,
      (select count(*) from brands)::int as brands,
      (select count(*) from avatars)::int as avatars,
      (select count(*) from voiceovers)::int as voiceovers,
      (select count(*) from campaigns)::int as campaigns,
      (select count(*) from ad_library_scrape_jobs)::int as scrapes,
      (select count(*) from webhook_deliveries)::int as deliveries,
      (select count(*) from graphile_worker._private_jobs)::int as jobs`.execute(svc.app.db);
  return rows[0]!;
}

function expectErrorShape(res: ApiResponse): void {
  expect(res.body, res.text).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
  expect(res.body.error.message.length).toBeGreaterThan(0);
}

function bodyArbitrary(path: string, op: any, schema: any): fc.Arbitrary<unknown> {
  if (!schema) return fc.constant(undefined);
  const valid = validBody(path, op);
  if (!valid) return schemaArbitrary(schema, doc);
  return fc.oneof({ weight: 2, arbitrary: schemaArbitrary(schema, doc) }, { weight: 1, arbitrary: fc.constant(valid) }, { weight: 3, arbitrary: nearlyValid(valid, schema) });
}

const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
  Object.entries(ops)
    .filter(([, op]) => op && typeof op === 'object' && op.responses)
    .map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);

describe('fuzzing every REST operation from the OpenAPI document', () => {
  it('covers every operation', () => {
    expect(operations.length).toBeGreaterThan(40);
  });

  for (const { path, method, op } of operations) {
    it(`${method} ${path}`, async () => {
      const params = ((op.parameters ?? []) as any[]).map((p) => (p.$ref ? resolveRef(doc, p.$ref) : p));
      const pathParams = params.filter((p) => p.in === 'path');
      const queryParams = params.filter((p) => p.in === 'query');
      const bodySchema = op.requestBody?.content?.['application/json']?.schema;
      const input = fc.record({
        ids: fc.tuple(...pathParams.map(() => fc.oneof({ weight: 3, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) }))),
        query: fc.record(Object.fromEntries(queryParams.map((p) => [p.name, queryValueArbitrary(p.schema ?? {}, doc, p.name)])), { requiredKeys: [] }),
        body: bodyArbitrary(path, op, bodySchema),
        idempotencyKey: fc.option(fc.string({ minLength: 1, maxLength: 40, unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }), { nil: undefined }),
      });
      await fc.assert(
        fc.asyncProperty(input, async ({ ids, query, body, idempotencyKey }) => {
          let i = 0;
          const url = `/api/v1${path.replace(/\{[^}]+\}/g, () => encodeURIComponent(String(ids[i++])))}`;
          const qs = new URLSearchParams(Object.entries(query) as [string, string][]).toString();
          const before = await stored();
          const res = await svc.api(method, qs ? `${url}?${qs}` : url, {
            key,
            ...(body !== undefined ? { body } : {}),
            ...(idempotencyKey && method === 'POST' ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
          });
          expect(res.status, `${method} ${url} ${JSON.stringify(body)?.slice(0, 300)}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
          if (res.status >= 400) {
            expectErrorShape(res);
            expect(await stored(), `${method} ${url} answered ${res.status} but changed what is stored`).toEqual(before);
          }
        }),
        { numRuns: method === 'GET' ? Math.ceil(RUNS / 2) : RUNS },
      );
    });
  }
});
