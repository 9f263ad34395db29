import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';

let svc: TestService;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
beforeAll(async () => {
  svc = await startTestService();
  gql = await graphqlClient(svc);
});
afterAll(async () => {
  await gql?.close();
  await svc?.close();
});

const image = (n: number, quantity = 1) => ({ model: 'fast', prompt: `shot ${n}`, aspect_ratio: '1:1', quantity });

async function allLines(key: string, query = '') {
  const lines: any[] = [];
  for (let offset = 0; ; offset += 100) {
    const res = await svc.api('GET', `/api/v1/account/ledger?limit=100&offset=${offset}${query}`, { key });
    expect(res.status).toBe(200);
    lines.push(...res.body.data);
    if (offset + 100 >= res.body.pagination.total) return { lines, total: res.body.pagination.total };
  }
}

describe('GET /account/ledger', () => {
  it('after concurrent creates, refusals, a failure, a cancel, a voiceover, a period reset and a limit change: every line, newest first, summing to credits_used', async () => {
    const t = await svc.team({ credits: 60 });
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: image(i, 1 + (i % 3)) })));
    const made = answers.filter((a) => a.status === 202);
    expect(answers.every((a) => a.status === 202 || a.status === 402)).toBe(true);
    expect(answers.some((a) => a.status === 402)).toBe(true);
    const failed = made[0]!.body.generation_id;
    await svc.app.services.lifecycle.fail(failed, 'stopped by the test');
    const cancelled = made[1]!.body.generation_id;
    expect((await svc.api('POST', `/api/v1/generations/${cancelled}/cancel`, { key: t.key })).body.error).toBe('cancelled');
    await svc.app.services.credits.setLimit(t.teamId, 200);
    const tts = await svc.api('POST', '/api/v1/voiceovers/text-to-speech', { key: t.key, body: { text: 'Big sale today.', voice_id: VOICES[0]!.id } });
    expect(tts.status).toBe(201);
    await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: image(99, 2) });

    const balance = (await svc.api('GET', '/api/v1/account/credits', { key: t.key })).body;
    const { lines, total } = await allLines(t.key);
    expect(lines).toHaveLength(total);
    expect(lines.reduce((s, l) => s + l.amount, 0)).toBe(balance.credits_used);
    expect(lines[0].credits_used_after).toBe(balance.credits_used);
    // Newest first, each line's balance the running sum of the lines before it.
    const oldestFirst = [...lines].reverse();
    let running = 0;
    for (const l of oldestFirst) {
      running += l.amount;
      expect(l.credits_used_after).toBe(running);
    }
    expect(lines.map((l) => BigInt(l.id))).toEqual([...lines.map((l) => BigInt(l.id))].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
    expect(lines.filter((l) => l.kind === 'debit' && l.subject_type === 'generation')).toHaveLength(made.length + 1);
    expect(lines.find((l) => l.kind === 'limit_set')).toMatchObject({ amount: 0, note: 'limit 60 -> 200' });
    expect(lines.find((l) => l.subject_type === 'voiceover')).toMatchObject({ kind: 'debit', generation_id: null });

    // One generation: its debit and its refund.
    const own = await allLines(t.key, `&generation_id=${failed}`);
    expect(own.lines.map((l) => [l.kind, l.generation_id])).toEqual([
      ['refund', failed],
      ['debit', failed],
    ]);
    expect(own.lines[0].amount).toBe(-own.lines[1].amount);
    // Filters pick lines without changing their balances.
    const refunds = await allLines(t.key, '&kind=refund');
    expect(refunds.lines.map((l) => l.generation_id).sort()).toEqual([failed, cancelled].sort());
    expect(refunds.lines.map((l) => l.credits_used_after)).toEqual(lines.filter((l) => l.kind === 'refund').map((l) => l.credits_used_after));

    // A period reset brings credits_used to 0: the ledger still sums to it.
    await svc.app.services.credits.resetPeriod(t.teamId);
    const after = await allLines(t.key);
    expect(after.lines[0]).toMatchObject({ kind: 'period_reset', amount: -balance.credits_used, credits_used_after: 0 });
    expect(after.lines.reduce((s, l) => s + l.amount, 0)).toBe(0);
  });

  it('pages and filters by date; bad filters are 400 naming the field; another team sees only its own', async () => {
    const t = await svc.team({ credits: 10 });
    const other = await svc.team({ credits: 10 });
    for (let i = 0; i < 3; i++) await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: image(i) });
    const page = await svc.api('GET', '/api/v1/account/ledger?limit=2', { key: t.key });
    expect(page.body.pagination).toEqual({ total: 3, limit: 2, offset: 0 });
    expect(page.body.data).toHaveLength(2);
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect((await svc.api('GET', `/api/v1/account/ledger?since=${encodeURIComponent(future)}`, { key: t.key })).body.pagination.total).toBe(0);
    expect((await svc.api('GET', `/api/v1/account/ledger?until=${encodeURIComponent(future)}`, { key: t.key })).body.pagination.total).toBe(3);
    for (const [q, field] of [
      ['since=yesterday', 'since'],
      ['generation_id=nope', 'generation_id'],
      ['kind=gift', 'kind'],
      ['limit=0', 'limit'],
    ]) {
      const res = await svc.api('GET', `/api/v1/account/ledger?${q}`, { key: t.key });
      expect(res.status, q).toBe(400);
      expect(res.body.error.message, q).toMatch(new RegExp(`^${field}`));
    }
    expect((await svc.api('GET', '/api/v1/account/ledger', { key: other.key })).body.pagination.total).toBe(0);
    const gen = page.body.data[0].generation_id;
    expect((await svc.api('GET', `/api/v1/account/ledger?generation_id=${gen}`, { key: other.key })).body.data).toEqual([]);
  });

  it('GraphQL ledger answers the same lines', async () => {
    const t = await svc.team({ credits: 10 });
    await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: image(1, 2) });
    const res = await gql.gql(
      `{ ledger(limit: 5) { ... on QueryLedgerSuccess { data { totalCount items { id kind amount generation_id credits_used_after created_at } } } } }`,
      {},
      t.key,
    );
    const rest = (await svc.api('GET', '/api/v1/account/ledger?limit=5', { key: t.key })).body;
    expect(res.body.data.ledger.data.totalCount).toBe(1);
    expect(res.body.data.ledger.data.items).toEqual(rest.data.map((l: any) => ({ id: l.id, kind: l.kind, amount: l.amount, generation_id: l.generation_id, credits_used_after: l.credits_used_after, created_at: l.created_at })));
  });
});
