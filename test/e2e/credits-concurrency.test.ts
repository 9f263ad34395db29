import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';

// No worker here: what matters is what the create transaction commits.
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  // A 5xx fails a test above; its logged cause is what one needs to see next.
  const errors = svc?.logLines.filter((l) => l.includes('"level":50')) ?? [];
  if (errors.length) console.log(errors[0]!.slice(0, 1500));
  await svc?.close();
});

const cheapImage = (n: number) => ({ model: 'fast', prompt: `shot ${n}`, aspect_ratio: '1:1' });

async function counts(teamId: string) {
  const db = svc.app.db;
  const g = await sql<{ n: number }>`select count(*)::int n from generations where team_id = ${teamId}`.execute(db);
  const l = await sql<{ n: number; total: number }>`select count(*)::int n, coalesce(sum(amount), 0)::int total from credit_ledger where team_id = ${teamId} and kind = 'debit'`.execute(db);
  const j = await sql<{ n: number }>`select count(*)::int n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'run_generation' and (j.payload->>'generation_id')::uuid in (select id from generations where team_id = ${teamId})`.execute(db);
  const t = await svc.app.db.selectFrom('teams').select(['credits_used', 'credits_limit']).where('id', '=', teamId).executeTakeFirstOrThrow();
  return { generations: g.rows[0]!.n, debits: l.rows[0]!.n, debited: l.rows[0]!.total, jobs: j.rows[0]!.n, used: t.credits_used };
}

describe('402 insufficient_credits', () => {
  it('states required and available credits and leaves no generation, ledger row or job', async () => {
    const t = await svc.team({ credits: 15 });
    const res = await svc.api('POST', '/api/v1/images/text-to-image', {
      key: t.key,
      body: { model: 'pro', prompt: 'too expensive', aspect_ratio: '1:1', quantity: 4, resolution: '4k' },
    });
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('insufficient_credits');
    expect(res.body.error.message).toMatch(/16/);
    expect(res.body.error.message).toMatch(/15/);
    expect(await counts(t.teamId)).toEqual({ generations: 0, debits: 0, debited: 0, jobs: 0, used: 0 });
  });

  it('a 400 changes nothing either', async () => {
    const t = await svc.team({ credits: 15 });
    const res = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { model: 'sora-2', prompt: 'x', aspect_ratio: '1:1', duration: 4 } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^aspect_ratio: /);
    expect(await counts(t.teamId)).toEqual({ generations: 0, debits: 0, debited: 0, jobs: 0, used: 0 });
  });
});

describe('under concurrency', () => {
  it('200 parallel creates (50 keys x 4) on credits for exactly 30: 30 generations, charged once each, repeats identical, no 5xx', async () => {
    const t = await svc.team({ credits: 30 });
    const requests = Array.from({ length: 200 }, (_, i) => {
      const k = i % 50;
      return svc
        .api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(k), headers: { 'idempotency-key': `campaign-row-${k}` } })
        .then((r) => ({ k, r }));
    });
    const results = await Promise.all(requests);
    expect(results.filter(({ r }) => r.status >= 500)).toEqual([]);
    const byKey = new Map<number, Array<{ status: number; body: unknown; replayed: boolean }>>();
    for (const { k, r } of results) {
      const list = byKey.get(k) ?? [];
      list.push({ status: r.status, body: r.body, replayed: r.headers['idempotent-replayed'] === 'true' });
      byKey.set(k, list);
    }
    let accepted = 0;
    for (const [k, list] of byKey) {
      expect(list, `key ${k}`).toHaveLength(4);
      for (const x of list) {
        expect(x.status, `key ${k}`).toBe(list[0]!.status);
        expect(x.body, `key ${k}`).toEqual(list[0]!.body);
      }
      expect(list.filter((x) => !x.replayed), `key ${k}: one original`).toHaveLength(1);
      expect([202, 402]).toContain(list[0]!.status);
      if (list[0]!.status === 202) accepted++;
    }
    expect(accepted).toBe(30);
    expect(await counts(t.teamId)).toEqual({ generations: 30, debits: 30, debited: 30, jobs: 30, used: 30 });
  });

  it('many keys at once never spend past the limit (no idempotency keys)', async () => {
    const t = await svc.team({ credits: 25 });
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(i) })),
    );
    expect(results.filter((r) => r.status === 202)).toHaveLength(25);
    expect(results.filter((r) => r.status === 402)).toHaveLength(35);
    expect((await counts(t.teamId)).used).toBe(25);
  });
});

describe('Idempotency-Key', () => {
  it('replays the stored response with Idempotent-Replayed: true and charges nothing again', async () => {
    const t = await svc.team({ credits: 10 });
    const send = (body: unknown) =>
      svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body, headers: { 'idempotency-key': 'order-1' } });
    const first = await send(cheapImage(1));
    const again = await send({ aspect_ratio: '1:1', prompt: 'shot 1', model: 'fast' });
    expect(first.status).toBe(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await counts(t.teamId)).used).toBe(1);
  });

  it('refuses the same key with a different body (400), and keeps it usable after a 400', async () => {
    const t = await svc.team({ credits: 10 });
    const headers = { 'idempotency-key': 'k-400' };
    const bad = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'nope' }, headers });
    expect(bad.status).toBe(400);
    const ok = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(2), headers });
    expect(ok.status).toBe(202);
    const other = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(3), headers });
    expect(other.status).toBe(400);
    expect(other.body.error).toEqual({ code: 'validation_error', message: 'Idempotency-Key: this key was already used with a different request body' });
  });

  it('stores a 402 and a 404 like a success', async () => {
    const t = await svc.team({ credits: 0 });
    const headers = { 'idempotency-key': 'k-402' };
    const a = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(1), headers });
    await svc.app.services.credits.setLimit(t.teamId, 10);
    const b = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(1), headers });
    expect([a.status, b.status]).toEqual([402, 402]);
    expect(b.headers['idempotent-replayed']).toBe('true');
    const missing = { model: 'fast', aspect_ratio: '1:1', product_id: '00000000-0000-4000-8000-000000000000', style_id: 'studio-white' };
    const c = await svc.api('POST', '/api/v1/images/product-shots', { key: t.key, body: missing, headers: { 'idempotency-key': 'k-404' } });
    const d = await svc.api('POST', '/api/v1/images/product-shots', { key: t.key, body: missing, headers: { 'idempotency-key': 'k-404' } });
    expect([c.status, d.status]).toEqual([404, 404]);
    expect(d.headers['idempotent-replayed']).toBe('true');
  });

  it('is scoped to team, method and path', async () => {
    const a = await svc.team({ credits: 10 });
    const b = await svc.team({ credits: 10 });
    const headers = { 'idempotency-key': 'shared' };
    const r1 = await svc.api('POST', '/api/v1/images/text-to-image', { key: a.key, body: cheapImage(1), headers });
    const r2 = await svc.api('POST', '/api/v1/images/text-to-image', { key: b.key, body: cheapImage(1), headers });
    const r3 = await svc.api('POST', '/api/v1/images/edit', {
      key: a.key,
      body: { ...cheapImage(1), reference_image_urls: ['https://example.com/a.png'] },
      headers,
    });
    expect([r1.status, r2.status, r3.status]).toEqual([202, 202, 202]);
    expect(new Set([r1.body.generation_id, r2.body.generation_id, r3.body.generation_id]).size).toBe(3);
  });

  it('refuses a key that is not 1-255 printable ASCII characters', async () => {
    const t = await svc.team({ credits: 10 });
    for (const key of ['x'.repeat(256), 'tab\there', 'ünïcode']) {
      const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(1), headers: { 'idempotency-key': key } });
      expect(res.status, key).toBe(400);
      expect(res.body.error.message).toMatch(/^Idempotency-Key: /);
    }
    expect((await counts(t.teamId)).used).toBe(0);
  });

  it('expires after 24 hours: the purge removes it and the key makes a new generation', async () => {
    const t = await svc.team({ credits: 10 });
    const headers = { 'idempotency-key': 'old' };
    const first = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(1), headers });
    await svc.app.db.updateTable('idempotency_keys').set({ created_at: new Date(Date.now() - 25 * 3600_000) }).where('key', '=', 'old').execute();
    const { purgeExpiredIdempotencyKeys } = await import('../../src/services/idempotency.ts');
    expect(await purgeExpiredIdempotencyKeys(svc.app.db)).toBeGreaterThanOrEqual(1);
    const second = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(1), headers });
    expect(second.status).toBe(202);
    expect(second.body.generation_id).not.toBe(first.body.generation_id);
  });

  it('an answer past 24 hours that the purge has not removed yet no longer holds the key', async () => {
    const t = await svc.team({ credits: 10 });
    const headers = { 'idempotency-key': 'stale' };
    const first = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(1), headers });
    await svc.app.db.updateTable('idempotency_keys').set({ created_at: new Date(Date.now() - 25 * 3600_000) }).where('key', '=', 'stale').execute();
    const second = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(1), headers });
    const third = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(1), headers });
    expect([first.status, second.status, third.status]).toEqual([202, 202, 202]);
    expect(second.body.generation_id).not.toBe(first.body.generation_id);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(third.body).toEqual(second.body);
    expect(third.headers['idempotent-replayed']).toBe('true');
    expect((await counts(t.teamId)).used).toBe(2);
  });

  it('a success stays the key\'s answer when the credits have run out or its product is gone since', async () => {
    const t = await svc.team({ credits: 1 });
    const first = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(1), headers: { 'idempotency-key': 'paid' } });
    expect(first.status).toBe(202);
    const again = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(1), headers: { 'idempotency-key': 'paid' } });
    expect([again.status, again.headers['idempotent-replayed']]).toEqual([202, 'true']);
    expect(again.body).toEqual(first.body);

    // A product the shot is made of, removed afterwards (links and row, as a later deletion would leave it).
    await svc.app.services.credits.setLimit(t.teamId, 100);
    const product = await svc.app.db
      .insertInto('products')
      .values({ team_id: t.teamId, name: 'Shoe', description: 'A shoe', category: 'shoes', image_key: 'products/none.png', image_source_url: 'https://example.com/shoe.png' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const shot = { model: 'fast', aspect_ratio: '1:1', product_id: product.id, style_id: 'studio-white' };
    const made = await svc.api('POST', '/api/v1/images/product-shots', { key: t.key, body: shot, headers: { 'idempotency-key': 'shot' } });
    expect(made.status).toBe(202);
    await svc.app.db.deleteFrom('generation_products').where('product_id', '=', product.id).execute();
    await svc.app.db.deleteFrom('products').where('id', '=', product.id).execute();
    const fresh = await svc.api('POST', '/api/v1/images/product-shots', { key: t.key, body: shot });
    expect(fresh.status).toBe(404);
    const replay = await svc.api('POST', '/api/v1/images/product-shots', { key: t.key, body: shot, headers: { 'idempotency-key': 'shot' } });
    expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([202, 'true']);
    expect(replay.body).toEqual(made.body);
    expect((await counts(t.teamId)).generations).toBe(2);
  });

  it('one key sent 20 times at once: one generation, one charge, the same answer 20 times', async () => {
    const t = await svc.team({ credits: 100 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: cheapImage(7), headers: { 'idempotency-key': 'burst' } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    expect(new Set(answers.map((a) => a.body.generation_id)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(await counts(t.teamId)).toMatchObject({ generations: 1, debits: 1, debited: 1, jobs: 1, used: 1 });
  });
});
