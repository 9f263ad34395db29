import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import type { GenerationOperation } from '../../src/domain/generation-types.ts';
import { startTestService, type TestService } from '../support/app.ts';

let svc: TestService;
let avatarId: string;
const voice = VOICES[0]!.id;

beforeAll(async () => {
  svc = await startTestService();
  const t = await svc.team();
  avatarId = (await svc.api('GET', '/api/v1/avatars', { key: t.key })).body.data[0].id;
});
afterAll(async () => {
  await svc?.close();
});

const image = (prompt: string, quantity: number) => ({ operation: 'text-to-image' as GenerationOperation, body: { prompt, model: 'fast', aspect_ratio: '1:1', quantity } });
const avatar = (id: string) => ({
  operation: 'talking-avatar' as GenerationOperation,
  body: { avatar_id: id, avatar_type: 'platform', script: 'Hi there, meet our shoe.', voice_id: voice },
});
const keyed = (prefix: string, items: { operation: GenerationOperation; body: unknown }[]) =>
  items.map((it, i) => ({ ...it, idem: { key: `${prefix}:${i}`, method: 'POST', path: `campaign:${it.operation}` } }));

async function ledgerOf(teamId: string) {
  const db = svc.app.db;
  const team = await db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow();
  const generations = await db.selectFrom('generations').select(['id', 'credits']).where('team_id', '=', teamId).execute();
  const ledger = await db.selectFrom('credit_ledger').select(['amount', 'subject_id']).where('team_id', '=', teamId).where('kind', '=', 'debit').execute();
  const jobs = await sql<{ n: number }>`select count(*)::int as n from graphile_worker._private_jobs where key = any(${generations.map((g) => `generation:${g.id}`)}::text[]) and payload->>'generation_id' = substr(key, 12)`.execute(db);
  const keys = await db.selectFrom('idempotency_keys').select(['key', 'response_status']).where('team_id', '=', teamId).orderBy('key').execute();
  return { used: team.credits_used, generations, ledger, jobs: jobs.rows[0]!.n, keys };
}

const create = (teamId: string, keyId: string, items: ReturnType<typeof keyed>) =>
  svc.app.db.transaction().execute((trx) => svc.app.services.generationCreator.createManyIn(trx, { teamId, keyId }, items));

describe('many creates of one team in one transaction (a campaign batch)', () => {
  it('answers each as its endpoint would, accepts in order what fits, and writes each accepted one once with one debit', async () => {
    const t = await svc.team({ credits: 25 });
    const items = keyed('mixed', [
      image('a red sneaker', 2),
      avatar(avatarId),
      avatar(avatarId), // 20 more do not fit in the 3 left
      image('a blue sneaker', 1), // but 1 does
      { operation: 'text-to-image', body: { prompt: 'x', model: 'nope', aspect_ratio: '1:1' } },
      avatar('00000000-0000-4000-8000-00000000abcd'),
    ]);
    const out = await create(t.teamId, t.keyId, items);
    expect(out.map((o) => o.status)).toEqual([202, 202, 402, 202, 400, 404]);
    expect(out.every((o) => !o.replayed)).toBe(true);
    expect((out[2]!.body as any).error).toEqual({ code: 'insufficient_credits', message: 'Not enough credits: this generation needs 20 credits and 3 are available' });
    expect((out[4]!.body as any).error.code).toBe('validation_error');
    expect((out[1]!.body as any)).toEqual({ generation_id: expect.any(String), type: 'talking-avatar', status: 'processing' });

    const after = await ledgerOf(t.teamId);
    expect(after.used).toBe(23);
    expect(after.generations.map((g) => g.id).sort()).toEqual([0, 1, 3].map((i) => (out[i]!.body as any).generation_id).sort());
    expect(after.ledger.reduce((s, l) => s + l.amount, 0)).toBe(23);
    expect(after.ledger.map((l) => l.subject_id).sort()).toEqual(after.generations.map((g) => g.id).sort());
    expect(after.jobs).toBe(3);
    // 202s, the 402 and the 404 are the keys' answers from now on; the 400 leaves its key usable.
    expect(after.keys.map((k) => [k.key, k.response_status])).toEqual([
      ['mixed:0', 202],
      ['mixed:1', 202],
      ['mixed:2', 402],
      ['mixed:3', 202],
      ['mixed:5', 404],
    ]);
    const links = await svc.app.db.selectFrom('generation_avatars').select('avatar_id').where('generation_id', '=', (out[1]!.body as any).generation_id).execute();
    expect(links).toEqual([{ avatar_id: avatarId }]);

    // The same batch again replays every stored answer and charges nothing.
    const again = await create(t.teamId, t.keyId, items);
    expect(again.map((o) => [o.status, o.replayed])).toEqual([
      [202, true],
      [202, true],
      [402, true],
      [202, true],
      [400, false],
      [404, true],
    ]);
    expect(again.map((o) => o.body)).toEqual(out.map((o) => o.body));
    expect(await ledgerOf(t.teamId)).toEqual(after);
  });

  it('refuses a key reused with a different body with a 400 and writes nothing for it', async () => {
    const t = await svc.team({ credits: 10 });
    await create(t.teamId, t.keyId, keyed('reuse', [image('one', 1)]));
    const before = await ledgerOf(t.teamId);
    const out = await create(t.teamId, t.keyId, keyed('reuse', [image('another', 1)]));
    expect(out[0]).toMatchObject({ status: 400, replayed: false, body: { error: { code: 'validation_error', message: expect.stringMatching(/different request body/) } } });
    expect(await ledgerOf(t.teamId)).toEqual(before);
  });

  it('run twice at once (two runners of one campaign), every row is created and charged once', async () => {
    const t = await svc.team({ credits: 1000 });
    const items = keyed('race', Array.from({ length: 40 }, (_, i) => image(`poster ${i}`, 1 + (i % 2))));
    const [a, b] = await Promise.all([create(t.teamId, t.keyId, items), create(t.teamId, t.keyId, items)]);
    expect(a.map((o) => o.body)).toEqual(b.map((o) => o.body));
    expect([a, b].map((r) => r.every((o) => o.replayed))).toContain(true);
    const after = await ledgerOf(t.teamId);
    expect(after.generations).toHaveLength(40);
    expect(after.used).toBe(60);
    expect(after.jobs).toBe(40);
  });

  it('with nothing new to make (every row refused or replayed), locks no team row and writes nothing', async () => {
    const t = await svc.team({ credits: 0 });
    const out = await create(t.teamId, t.keyId, keyed('broke', [image('x', 1), avatar(avatarId)]));
    expect(out.map((o) => o.status)).toEqual([402, 402]);
    expect((out[0]!.body as any).error.message).toBe('Not enough credits: this generation needs 1 credits and 0 are available');
    const after = await ledgerOf(t.teamId);
    expect([after.used, after.generations.length, after.jobs]).toEqual([0, 0, 0]);
  });
});

describe('the render job a create queues, built by the run_generation contract', () => {
  const jobsOf = async (ids: string[]) =>
    (
      await sql<{ task_identifier: string; key: string | null; max_attempts: number; priority: number; payload: unknown }>`
        select t.identifier as task_identifier, j.key, j.max_attempts, j.priority, j.payload
        from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
        where j.key = any(${ids.map((id) => `generation:${id}`)}::text[]) order by j.key`.execute(svc.app.db)
    ).rows;
  const expected = (id: string) => ({ task_identifier: 'run_generation', key: `generation:${id}`, max_attempts: svc.app.config.generationMaxAttempts, priority: 0, payload: { generation_id: id } });

  it('is the same job from one create (one statement) and from a batch (one statement for many)', async () => {
    const t = await svc.team({ credits: 100 });
    const one = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { prompt: 'a green sneaker', model: 'fast', aspect_ratio: '1:1' } });
    expect(one.status).toBe(202);
    const id = one.body.generation_id as string;
    expect(await jobsOf([id])).toEqual([expected(id)]);

    const out = await create(t.teamId, t.keyId, keyed('contract', [image('a', 1), image('b', 1)]));
    const ids = out.map((o) => (o.body as { generation_id: string }).generation_id).sort();
    expect(await jobsOf(ids)).toEqual(ids.map(expected));
  });
});
