import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

// The service sends webhooks to 127.0.0.1 here (ALLOW_PRIVATE_NETWORK_URLS in the test service).
let svc: TestService;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  svc = await startTestService();
  gql = await graphqlClient(svc);
  hook = await startWebhookReceiver();
});
afterAll(async () => {
  await hook?.close();
  await gql?.close();
  await svc?.close();
});

/** A team whose key sends its webhooks to the receiver, and a generation of it that failed and was announced. */
async function teamWithFailedGeneration() {
  const t = await svc.team({ credits: 100 });
  await svc.app.services.teams.setWebhook(t.keyId, hook.url);
  const created = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'a shoe', aspect_ratio: '1:1' } });
  const id = created.body.generation_id as string;
  await svc.app.services.lifecycle.fail(id, 'stopped by the test');
  await svc.app.services.webhooks.deliverFor(id);
  return { ...t, generationId: id };
}

describe('webhook deliveries, per key', () => {
  it('lists each attempt with what was sent and what the receiver said; filters by generation and outcome', async () => {
    const t = await teamWithFailedGeneration();
    hook.setAnswer((res) => res.writeHead(503).end('busy'));
    await svc.app.services.webhooks.deliverFor(t.generationId);
    hook.setAnswer((res) => res.writeHead(200).end('ok'));

    const list = await svc.api('GET', '/api/v1/webhooks/deliveries', { key: t.key });
    expect(list.status).toBe(200);
    expect(list.body.pagination.total).toBe(2);
    const [failed, ok] = list.body.data;
    expect(failed).toMatchObject({ event: 'generation.failed', generation_id: t.generationId, url: hook.url, ok: false, status_code: 503, error: 'HTTP 503', event_id: `${t.generationId}:generation.failed` });
    expect(ok).toMatchObject({ ok: true, status_code: 200, error: null });
    // The exact bytes the receiver got.
    const got = hook.received.filter((r) => String(r.headers['x-service-event-id']) === ok.event_id);
    expect(got.map((r) => r.raw.toString('utf8'))).toContain(ok.body);
    expect(JSON.parse(ok.body)).toMatchObject({ event: 'generation.failed', generation_id: t.generationId, error_message: 'stopped by the test' });

    expect((await svc.api('GET', '/api/v1/webhooks/deliveries?outcome=failed', { key: t.key })).body.data.map((d: any) => d.id)).toEqual([failed.id]);
    expect((await svc.api('GET', '/api/v1/webhooks/deliveries?outcome=succeeded', { key: t.key })).body.data.map((d: any) => d.id)).toEqual([ok.id]);
    expect((await svc.api('GET', `/api/v1/webhooks/deliveries?generation_id=${t.generationId}&limit=1`, { key: t.key })).body.pagination).toEqual({ total: 2, limit: 1, offset: 0 });
    expect((await svc.api('GET', '/api/v1/webhooks/deliveries?outcome=maybe', { key: t.key })).status).toBe(400);
    // Another key of the same team, and another team, see none of them.
    const otherKey = await svc.app.services.teams.createKey(t.teamId);
    expect((await svc.api('GET', '/api/v1/webhooks/deliveries', { key: otherKey.key })).body.pagination.total).toBe(0);
    const other = await svc.team();
    expect((await svc.api('GET', '/api/v1/webhooks/deliveries', { key: other.key })).body.pagination.total).toBe(0);
  });

  it('redelivers an attempt: same body and event id, a new timestamp and signature, recorded as a new attempt', async () => {
    const t = await teamWithFailedGeneration();
    const [first] = (await svc.api('GET', '/api/v1/webhooks/deliveries', { key: t.key })).body.data;
    const before = hook.received.length;
    await new Promise((r) => setTimeout(r, 1100)); // a new second, so a new timestamp
    const res = await svc.api('POST', `/api/v1/webhooks/deliveries/${first.id}/redeliver`, { key: t.key });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ event: first.event, event_id: first.event_id, body: first.body, ok: true, status_code: 200, redelivery_of: first.id });
    expect(res.body.id).not.toBe(first.id);
    expect(hook.received).toHaveLength(before + 1);
    const [original, again] = hook.received.filter((r) => r.headers['x-service-event-id'] === first.event_id).slice(-2);
    expect(again!.raw.equals(original!.raw)).toBe(true);
    expect(again!.headers['webhook-id']).toBe(original!.headers['webhook-id']);
    expect(Number(again!.headers['x-service-timestamp'])).toBeGreaterThan(Number(original!.headers['x-service-timestamp']));
    expect(again!.headers['webhook-signature']).not.toBe(original!.headers['webhook-signature']);
    const secret = (await svc.app.db.selectFrom('api_keys').select('webhook_secret').where('id', '=', t.keyId).executeTakeFirstOrThrow()).webhook_secret;
    expect(new Webhook(secret).verify(again!.raw.toString('utf8'), again!.headers as Record<string, string>)).toEqual(JSON.parse(first.body));
    expect((await svc.api('GET', '/api/v1/webhooks/deliveries', { key: t.key })).body.pagination.total).toBe(2);

    // Someone else's attempt is not found; an unknown id neither; a key without a URL cannot send.
    const other = await svc.team();
    expect((await svc.api('POST', `/api/v1/webhooks/deliveries/${first.id}/redeliver`, { key: other.key })).status).toBe(404);
    expect((await svc.api('POST', '/api/v1/webhooks/deliveries/not-a-uuid/redeliver', { key: t.key })).status).toBe(400);
    await svc.app.services.teams.setWebhook(t.keyId, null);
    const none = await svc.api('POST', `/api/v1/webhooks/deliveries/${first.id}/redeliver`, { key: t.key });
    expect([none.status, none.body.error.code]).toEqual([409, 'conflict']);
  });

  it('sends a signed test event and answers what the receiver said; GraphQL does the same', async () => {
    const t = await svc.team();
    expect((await svc.api('POST', '/api/v1/webhooks/test', { key: t.key })).status).toBe(409);
    await svc.app.services.teams.setWebhook(t.keyId, hook.url);
    hook.setAnswer((res) => res.writeHead(418).end('teapot'));
    const res = await svc.api('POST', '/api/v1/webhooks/test', { key: t.key });
    hook.setAnswer((res2) => res2.writeHead(200).end('ok'));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ event: 'webhook.test', generation_id: null, ok: false, status_code: 418, error: 'HTTP 418' });
    const got = hook.received.at(-1)!;
    expect(got.raw.toString('utf8')).toBe(res.body.body);
    expect(JSON.parse(res.body.body)).toMatchObject({ event: 'webhook.test', event_id: res.body.event_id });

    const q = await gql.gql(`mutation { sendTestWebhook { ... on MutationSendTestWebhookSuccess { data { event ok status_code body } } } }`, {}, t.key);
    expect(q.body.data.sendTestWebhook.data).toMatchObject({ event: 'webhook.test', ok: true, status_code: 200 });
    const list = await gql.gql(`{ webhookDeliveries(limit: 5) { ... on QueryWebhookDeliveriesSuccess { data { totalCount items { id event ok } } } } }`, {}, t.key);
    expect(list.body.data.webhookDeliveries.data.totalCount).toBe(2);
    const again = await gql.gql(`mutation ($id: ID!) { redeliverWebhook(id: $id) { ... on MutationRedeliverWebhookSuccess { data { redelivery_of } } } }`, { id: res.body.id }, t.key);
    expect(again.body.data.redeliverWebhook.data.redelivery_of).toBe(res.body.id);
  });
});
