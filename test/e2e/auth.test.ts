import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domain/api-keys.ts';
import { startTestService, type TestService } from '../support/app.ts';

const UNAUTHORIZED = { error: { code: 'unauthorized', message: 'Missing or invalid API key' } };

let svc: TestService;
let starter: Awaited<ReturnType<TestService['team']>>;
beforeAll(async () => {
  svc = await startTestService();
  starter = await svc.team({ tier: 'starter' });
});
afterAll(() => svc?.close());

describe('401 unauthorized: the same body for every kind of bad key', () => {
  const cases: Array<[string, () => Record<string, string>]> = [
    ['no Authorization header', () => ({})],
    ['an empty Bearer', () => ({ authorization: 'Bearer ' })],
    ['another scheme', () => ({ authorization: `Basic ${starter.key}` })],
    ['the key without "Bearer"', () => ({ authorization: starter.key })],
    ['a malformed key', () => ({ authorization: 'Bearer service_sk_short' })],
    ['a wrong prefix', () => ({ authorization: `Bearer other_sk_${starter.key.slice(11)}` })],
    ['a key with a bad checksum', () => ({ authorization: `Bearer ${starter.key.slice(0, -1)}${starter.key.endsWith('A') ? 'B' : 'A'}` })],
    ['a well-formed key that was never issued', () => ({ authorization: `Bearer ${generateApiKey()}` })],
  ];
  for (const [name, headers] of cases) {
    it(name, async () => {
      const res = await svc.api('GET', '/api/v1/products', { headers: headers() });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });
  }

  it('a revoked key', async () => {
    const t = await svc.team();
    expect((await svc.api('GET', '/api/v1/products', { key: t.key })).status).toBe(200);
    await svc.app.services.teams.revokeKey(t.keyId);
    const res = await svc.api('GET', '/api/v1/products', { key: t.key });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
  });

  it('a key revoked elsewhere (another node, the CLI) is refused here as soon as the notice arrives', async () => {
    const t = await svc.team();
    expect((await svc.api('GET', '/api/v1/products', { key: t.key })).status).toBe(200);
    // As another process would: the update, then the notice every node listens to.
    await svc.app.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', t.keyId).execute();
    await svc.app.db.executeQuery(sql`select pg_notify('adforge_key_revocations', ${JSON.stringify({ key_id: t.keyId })})`.compile(svc.app.db));
    await expect.poll(async () => (await svc.api('GET', '/api/v1/products', { key: t.key })).status, { timeout: 500, interval: 20 }).toBe(401);
  });

  it('a revocation whose notice is lost is still refused within a second (the cache entry lives 1 s)', async () => {
    const t = await svc.team();
    expect((await svc.api('GET', '/api/v1/products', { key: t.key })).status).toBe(200);
    const revokedAt = Date.now();
    await svc.app.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', t.keyId).execute();
    await expect.poll(async () => (await svc.api('GET', '/api/v1/products', { key: t.key })).status, { timeout: 3000, interval: 25 }).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1500);
  });

  it('comes before body parsing: a bad key with malformed JSON is still 401', async () => {
    const res = await svc.api('POST', '/api/v1/products', {
      rawBody: '{not json',
      headers: { 'content-type': 'application/json', authorization: 'Bearer nope' },
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
  });

  it('guards every /api/v1 route', async () => {
    const routes: Array<[string, string]> = [
      ['GET', '/api/v1/products'],
      ['POST', '/api/v1/products'],
      ['GET', '/api/v1/products/00000000-0000-4000-8000-000000000000'],
      ['DELETE', '/api/v1/products/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/v1/brands'],
      ['GET', '/api/v1/brands/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/v1/avatars'],
      ['GET', '/api/v1/avatars/custom'],
      ['POST', '/api/v1/avatars/custom'],
      ['DELETE', '/api/v1/avatars/custom/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/v1/account/credits'],
    ];
    for (const [method, path] of routes) {
      const res = await svc.api(method, path);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
  });
});

describe('403 forbidden below the Starter tier', () => {
  it('a free team is refused; starter, pro and business are served', async () => {
    const free = await svc.team({ tier: 'free', credits: 0 });
    const res = await svc.api('GET', '/api/v1/account/credits', { key: free.key });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect(res.body.error.message).toMatch(/Starter/);
    for (const tier of ['starter', 'pro', 'business']) {
      const t = await svc.team({ tier });
      expect((await svc.api('GET', '/api/v1/account/credits', { key: t.key })).status, tier).toBe(200);
    }
  });

  it('takes effect at once when a team is moved down a tier', async () => {
    const t = await svc.team({ tier: 'pro' });
    await svc.app.db.updateTable('teams').set({ tier: 'free' }).where('id', '=', t.teamId).execute();
    expect((await svc.api('GET', '/api/v1/products', { key: t.key })).status).toBe(403);
  });
});

describe('key storage', () => {
  it('keeps only a SHA-256 digest of each key', async () => {
    const rows = await svc.app.db.selectFrom('api_keys').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(starter.key);
    expect(dump).not.toContain(starter.key.slice(11, 43));
    for (const r of rows) expect(r.key_digest).toHaveLength(32);
  });

  it('gives every key its own webhook secret', async () => {
    const a = await svc.team();
    const b = await svc.team();
    expect(a.webhookSecret).not.toEqual(b.webhookSecret);
    expect(a.webhookSecret.length).toBeGreaterThanOrEqual(32);
  });
});
