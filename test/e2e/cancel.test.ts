import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

// A worker runs here, with the local engine waiting 20 s before it renders: long enough to cancel
// a generation while its render is under way, short enough for the rest to finish.
let svc: TestService;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  hook = await startWebhookReceiver();
  svc = await startTestService({ LOCAL_ENGINE_DELAY_MS: '20000' }, { worker: true });
  gql = await graphqlClient(svc);
});
afterAll(async () => {
  await hook?.close();
  await gql?.close();
  await svc?.close();
});

const image = { model: 'fast', prompt: 'a shoe', aspect_ratio: '1:1', quantity: 3 };
const used = async (teamId: string) => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow()).credits_used;
const webhooksOf = (id: string) => hook.received.filter((r) => JSON.parse(r.raw.toString('utf8')).generation_id === id).map((r) => JSON.parse(r.raw.toString('utf8')));

describe('POST /generations/{id}/cancel', () => {
  it('fails a processing generation with error cancelled, refunds it at once, stops its render, and answers the same again', async () => {
    const t = await svc.team({ credits: 10 });
    await svc.app.services.teams.setWebhook(t.keyId, hook.url);
    const created = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: image });
    const id = created.body.generation_id;
    expect(await used(t.teamId)).toBe(3);
    // Wait until the worker has taken the job (its render then waits on the engine's delay).
    const taken = async () => (await sql<{ n: number }>`select count(*)::int as n from graphile_worker._private_jobs where key = ${`generation:${id}`} and locked_at is not null`.execute(svc.app.db)).rows[0]!.n === 1;
    for (let i = 0; i < 100 && !(await taken()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await taken()).toBe(true);
    await new Promise((r) => setTimeout(r, 300));

    const t0 = Date.now();
    const res = await svc.api('POST', `/api/v1/generations/${id}/cancel`, { key: t.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, status: 'failed', error: 'cancelled', result_url: null });
    expect(await used(t.teamId)).toBe(0);
    const ledger = (await svc.api('GET', `/api/v1/account/ledger?generation_id=${id}`, { key: t.key })).body.data;
    expect(ledger.map((l: any) => [l.kind, l.amount])).toEqual([
      ['refund', -3],
      ['debit', 3],
    ]);
    // The render stops long before the engine's 20 s: the worker says so.
    for (let i = 0; i < 100 && !svc.logLines.some((l) => l.includes(id) && l.includes('render stopped')); i++) await new Promise((r) => setTimeout(r, 100));
    expect(svc.logLines.some((l) => l.includes(id) && l.includes('render stopped'))).toBe(true);
    expect(Date.now() - t0).toBeLessThan(10_000);

    const again = await svc.api('POST', `/api/v1/generations/${id}/cancel`, { key: t.key });
    expect([again.status, again.body.error]).toEqual([200, 'cancelled']);
    expect(await used(t.teamId)).toBe(0);
    expect((await svc.api('GET', `/api/v1/generations/${id}`, { key: t.key })).body).toMatchObject({ status: 'failed', error: 'cancelled' });
    // One generation.failed webhook, however often it is cancelled.
    for (let i = 0; i < 50 && webhooksOf(id).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1000));
    expect(webhooksOf(id)).toEqual([expect.objectContaining({ event: 'generation.failed', status: 'failed', error_message: 'cancelled' })]);
  }, 60_000);

  it('a finished generation is 409, another team\'s 404, a bad id 400; GraphQL cancels too', async () => {
    const t = await svc.team({ credits: 10 });
    const done = (await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { ...image, prompt: 'fail now [[fail]]' } })).body.generation_id;
    await svc.app.services.lifecycle.fail(done, 'failed on its own');
    const finished = await svc.api('POST', `/api/v1/generations/${done}/cancel`, { key: t.key });
    expect([finished.status, finished.body.error.code]).toEqual([409, 'conflict']);
    expect(finished.body.error.message).toMatch(/already failed/);

    const mine = (await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: image })).body.generation_id;
    const other = await svc.team();
    expect((await svc.api('POST', `/api/v1/generations/${mine}/cancel`, { key: other.key })).status).toBe(404);
    expect((await svc.api('POST', '/api/v1/generations/nope/cancel', { key: t.key })).status).toBe(400);
    expect((await svc.api('GET', `/api/v1/generations/${mine}`, { key: t.key })).body.status).toBe('processing');

    const res = await gql.gql(`mutation ($id: ID!) { cancelGeneration(id: $id) { ... on MutationCancelGenerationSuccess { data { id status error } } ... on AppError { code } } }`, { id: mine }, t.key);
    expect(res.body.data.cancelGeneration.data).toEqual({ id: mine, status: 'failed', error: 'cancelled' });
    const last = await waitForGeneration(svc, t.key, mine);
    expect(last.error).toBe('cancelled');
    expect(await used(t.teamId)).toBe(0);
  }, 60_000);
});
