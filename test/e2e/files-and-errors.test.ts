import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signLink } from '../../src/adapters/storage/signing.ts';
import { startTestService, type TestService } from '../support/app.ts';

let svc: TestService;
let team: Awaited<ReturnType<TestService['team']>>;
let thumbnail: string;

beforeAll(async () => {
  svc = await startTestService();
  team = await svc.team();
  thumbnail = (await svc.api('GET', '/api/v1/avatars', { key: team.key })).body.data[0].thumbnail_url;
});
afterAll(() => svc?.close());

describe('/files links', () => {
  it('serve the file while the signature and expiry hold', async () => {
    const res = await svc.fetchUrl(thumbnail);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
  });

  it('refuse a tampered signature, key or expiry with 403', async () => {
    const u = new URL(thumbnail);
    const sig = u.searchParams.get('signature')!;
    const variants = [
      (x: URL) => x.searchParams.set('signature', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1)),
      (x: URL) => x.searchParams.set('expires', String(Number(x.searchParams.get('expires')) + 3600)),
      (x: URL) => (x.pathname = x.pathname.replace(/\.png$/, '.jpg')),
      (x: URL) => x.searchParams.delete('signature'),
    ];
    for (const change of variants) {
      const bad = new URL(thumbnail);
      change(bad);
      const res = await svc.fetchUrl(bad.toString());
      expect(res.status, bad.toString()).toBe(403);
      expect(JSON.parse(res.bytes.toString()).error.code).toBe('forbidden');
    }
  });

  it('refuse a correctly signed link once it has expired', async () => {
    const u = new URL(thumbnail);
    const key = decodeURIComponent(u.pathname.replace(/^\/files\//, ''));
    const secret = (await svc.app.db.selectFrom('settings').select('value').where('name', '=', 'files_signing_secret').executeTakeFirstOrThrow()).value;
    const past = Math.floor(Date.now() / 1000) - 1;
    const res = await svc.fetchUrl(`${svc.baseUrl}/files/${key}?expires=${past}&signature=${signLink(key, past, secret)}`);
    expect(res.status).toBe(403);
    const future = past + 60;
    const ok = await svc.fetchUrl(`${svc.baseUrl}/files/${key}?expires=${future}&signature=${signLink(key, future, secret)}`);
    expect(ok.status).toBe(200);
  });
});

describe('errors', () => {
  it('unknown routes and methods answer 404 not_found in the spec shape', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/nope'],
      ['GET', '/nope'],
      ['PATCH', '/api/v1/products'],
      ['PUT', '/api/v1/account/credits'],
      ['POST', '/api/v1/brands'],
    ] as const) {
      const res = await svc.api(method, path, { key: team.key });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      expect(res.body.error.message).toContain(method);
    }
  });

  it('a server fault is 500 internal_error with the request id, no stack, and is logged with that id', async () => {
    await sql`alter table products rename to products_gone`.execute(svc.app.db);
    try {
      const res = await svc.api('GET', '/api/v1/products', { key: team.key });
      expect(res.status).toBe(500);
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(res.body.error.code).toBe('internal_error');
      const requestId = res.headers['x-request-id'] as string;
      expect(res.body.error.message).toContain(requestId);
      expect(res.text).not.toMatch(/products|relation|at .*\.ts|node_modules/);
      const logged = svc.logLines.find((l) => l.includes('"level":50') && l.includes(requestId));
      expect(logged).toBeDefined();
    } finally {
      await sql`alter table products_gone rename to products`.execute(svc.app.db);
    }
  });
});

describe('logs', () => {
  it('hold request ids and never an API key or webhook secret', async () => {
    const t = await svc.team();
    await svc.api('GET', '/api/v1/products', { key: t.key });
    await svc.api('GET', '/api/v1/products', { headers: { authorization: `Bearer ${t.key}x` } });
    svc.app.log.info({ created: { key: t.key, webhook_secret: t.webhookSecret } }, 'key created');
    const all = svc.logLines.join('');
    expect(all).toContain('"reqId"');
    expect(all).not.toContain(t.key);
    expect(all).not.toContain(t.key.slice(11));
    expect(all).not.toContain(t.webhookSecret);
  });
});
