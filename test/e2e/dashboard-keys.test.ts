import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { signedInUser, type DashboardSession } from '../support/dashboard-session.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

let svc: TestService;
let team: Awaited<ReturnType<TestService['team']>>;
let owner: DashboardSession;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  svc = await startTestService();
  team = await svc.team();
  owner = await signedInUser(svc, team.teamId, 'owner');
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await svc?.close();
});

const KEY_FIELDS = 'id name hint webhook_url created_at last_used_at revoked_at';
const CREATE = `mutation($name: String, $url: String) { createApiKey(name: $name, webhook_url: $url) { __typename ... on MutationCreateApiKeySuccess { data { key webhook_secret api_key { ${KEY_FIELDS} } } } ... on AppError { code message } } }`;

describe('Settings > API Keys through GraphQL', () => {
  it('creates a named key shown once, which works on /api/v1, is listed with when it was last used, and answers 401 once revoked', async () => {
    const res = await owner.gql(CREATE, { name: 'Zapier' });
    const { key, webhook_secret, api_key } = res.body.data.createApiKey.data;
    expect(key).toMatch(/^service_sk_/);
    expect(webhook_secret).toMatch(/^whsec_/);
    expect(api_key).toMatchObject({ name: 'Zapier', webhook_url: null, last_used_at: null, revoked_at: null });
    expect(key.startsWith(api_key.hint.split('…')[0])).toBe(true);

    expect((await svc.api('GET', '/api/v1/products', { key })).status).toBe(200);
    const listed = (await owner.gql(`{ apiKeys { ${KEY_FIELDS} } }`)).body.data.apiKeys;
    expect(listed[0]).toMatchObject({ id: api_key.id, name: 'Zapier' });
    expect(Date.parse(listed[0].last_used_at)).toBeGreaterThan(Date.parse(api_key.created_at) - 1000);
    // The list never carries the key or its secret.
    expect(JSON.stringify(listed)).not.toContain(key);

    const renamed = await owner.gql(`mutation($id: ID!) { renameApiKey(id: $id, name: "Zapier prod") { ... on MutationRenameApiKeySuccess { data { name } } } }`, { id: api_key.id });
    expect(renamed.body.data.renameApiKey.data.name).toBe('Zapier prod');

    const revoked = await owner.gql(`mutation($id: ID!) { revokeApiKey(id: $id) { ... on MutationRevokeApiKeySuccess { data { revoked_at } } } }`, { id: api_key.id });
    expect(revoked.body.data.revokeApiKey.data.revoked_at).not.toBeNull();
    expect((await svc.api('GET', '/api/v1/products', { key })).status).toBe(401);
  });

  it('refuses a bad webhook URL and a long name in the spec\'s words, storing nothing', async () => {
    const before = (await owner.gql('{ apiKeys { id } }')).body.data.apiKeys.length;
    const bad = await owner.gql(CREATE, { name: 'x', url: 'ftp://example.com/hook' });
    expect(bad.body.data.createApiKey).toEqual({ __typename: 'AppError', code: 'validation_error', message: 'webhook_url: must be an http(s) URL' });
    const long = await owner.gql(CREATE, { name: 'x'.repeat(101) });
    expect(long.body.data.createApiKey).toEqual({ __typename: 'AppError', code: 'validation_error', message: 'name: must be at most 100 characters' });
    expect((await owner.gql('{ apiKeys { id } }')).body.data.apiKeys.length).toBe(before);
  });

  it('sets a webhook URL, sends a signed test event, lists the delivery, rotates the secret and clears the URL', async () => {
    const created = (await owner.gql(CREATE, { name: 'hooks' })).body.data.createApiKey.data;
    const id = created.api_key.id;
    const set = await owner.gql(`mutation($id: ID!, $url: String) { setApiKeyWebhook(id: $id, url: $url) { ... on MutationSetApiKeyWebhookSuccess { data { webhook_url } } } }`, { id, url: receiver.url });
    expect(set.body.data.setApiKeyWebhook.data.webhook_url).toBe(receiver.url);

    const sent = await owner.gql(`mutation($id: ID!) { sendApiKeyTestWebhook(id: $id) { ... on MutationSendApiKeyTestWebhookSuccess { data { id event ok status_code } } } }`, { id });
    expect(sent.body.data.sendApiKeyTestWebhook.data).toMatchObject({ event: 'webhook.test', ok: true, status_code: 200 });
    const got = receiver.received.at(-1)!;
    const verified = new Webhook(created.webhook_secret.slice('whsec_'.length)).verify(got.raw.toString(), got.headers as Record<string, string>);
    expect(verified).toMatchObject({ event: 'webhook.test' });

    const log = await owner.gql(`query($id: ID!) { apiKeyDeliveries(key_id: $id) { totalCount items { id event ok } } }`, { id });
    expect(log.body.data.apiKeyDeliveries).toMatchObject({ totalCount: 1, items: [{ id: sent.body.data.sendApiKeyTestWebhook.data.id, event: 'webhook.test', ok: true }] });

    const rotated = (await owner.gql(`mutation($id: ID!) { rotateApiKeyWebhookSecret(id: $id) { ... on MutationRotateApiKeyWebhookSecretSuccess { data { webhook_secret } } } }`, { id })).body.data.rotateApiKeyWebhookSecret.data.webhook_secret;
    expect(rotated).not.toBe(created.webhook_secret);
    await owner.gql(`mutation($id: ID!) { sendApiKeyTestWebhook(id: $id) { __typename } }`, { id });
    const next = receiver.received.at(-1)!;
    expect(() => new Webhook(created.webhook_secret.slice(6)).verify(next.raw.toString(), next.headers as Record<string, string>)).toThrow();
    expect(new Webhook(rotated.slice(6)).verify(next.raw.toString(), next.headers as Record<string, string>)).toMatchObject({ event: 'webhook.test' });

    const cleared = await owner.gql(`mutation($id: ID!) { setApiKeyWebhook(id: $id, url: null) { ... on MutationSetApiKeyWebhookSuccess { data { webhook_url } } } }`, { id });
    expect(cleared.body.data.setApiKeyWebhook.data.webhook_url).toBeNull();
    const none = await owner.gql(`mutation($id: ID!) { sendApiKeyTestWebhook(id: $id) { ... on AppError { code } } }`, { id });
    expect(none.body.data.sendApiKeyTestWebhook.code).toBe('conflict');
  });

  it("another team's key is not found, whatever the mutation", async () => {
    const other = await svc.team();
    for (const m of ['revokeApiKey(id: $id)', 'renameApiKey(id: $id, name: "x")', 'setApiKeyWebhook(id: $id, url: null)', 'rotateApiKeyWebhookSecret(id: $id)', 'sendApiKeyTestWebhook(id: $id)']) {
      const res = await owner.gql(`mutation($id: ID!) { r: ${m} { __typename ... on AppError { code } } }`, { id: other.keyId });
      expect(res.body.data.r).toEqual({ __typename: 'AppError', code: 'not_found' });
    }
    expect((await svc.api('GET', '/api/v1/products', { key: other.key })).status).toBe(200);
  });
});

describe('credits from the dashboard', () => {
  const TOP_UP = 'mutation($n: Int!) { topUpCredits(credits: $n) { __typename ... on MutationTopUpCreditsSuccess { data { credits_used credits_limit credits_remaining } } ... on AppError { code message } } }';

  const ALLOWANCE = '{ topUpAllowance }';

  it('by default an owner cannot add credits: topUpCredits answers forbidden and changes nothing', async () => {
    const t = await svc.team({ credits: 100 });
    const o = await signedInUser(svc, t.teamId, 'owner');
    const res = await o.gql(TOP_UP, { n: 10 });
    expect(res.body.data.topUpCredits).toEqual({ __typename: 'AppError', code: 'forbidden', message: 'Adding credits from the dashboard is turned off on this server: ask your operator' });
    expect((await o.gql(ALLOWANCE)).body.data.topUpAllowance).toBeNull();
    expect((await svc.api('GET', '/api/v1/account/credits', { key: t.key })).body.credits_limit).toBe(100);
    const ledger = await svc.api('GET', '/api/v1/account/ledger?kind=limit_set', { key: t.key });
    expect(ledger.body.data).toEqual([]);
  });

  it('OWNER_TOP_UP=true: an owner adds credits up to OWNER_TOP_UP_MAX_PER_PERIOD a period, each ledger line naming who; a member, a key and bad amounts are refused, changing nothing', async () => {
    const on = await startTestService({ OWNER_TOP_UP: 'true', OWNER_TOP_UP_MAX_PER_PERIOD: '1000' });
    try {
      const t = await on.team({ credits: 100 });
      const o = await signedInUser(on, t.teamId, 'owner');
      const userId = (await o.gql('{ viewer { user_id } }')).body.data.viewer.user_id;
      expect((await o.gql(ALLOWANCE)).body.data.topUpAllowance).toBe(1000);
      const res = await o.gql(TOP_UP, { n: 250 });
      expect(res.body.data.topUpCredits).toEqual({ __typename: 'MutationTopUpCreditsSuccess', data: { credits_used: 0, credits_limit: 350, credits_remaining: 350 } });
      const ledger = await on.api('GET', '/api/v1/account/ledger?kind=limit_set', { key: t.key });
      expect(ledger.body.data[0]).toMatchObject({ subject_type: 'user', subject_id: userId, note: `top-up +250 by user ${userId} (${o.email}): limit 100 -> 350` });
      expect((await o.gql(ALLOWANCE)).body.data.topUpAllowance).toBe(750);

      for (const n of [0, -5, 1_000_001]) {
        expect((await o.gql(TOP_UP, { n })).body.data.topUpCredits).toEqual({ __typename: 'AppError', code: 'validation_error', message: 'credits: must be a whole number from 1 to 1000000' });
      }
      // Past the period's bound: refused whole, nothing added.
      expect((await o.gql(TOP_UP, { n: 751 })).body.data.topUpCredits).toEqual({
        __typename: 'AppError',
        code: 'validation_error',
        message: 'credits: at most 750 more can be added this period (the server allows 1000 a period)',
      });
      // Parallel top-ups cannot pass the bound together: 750 left, four of 300 at once, two pass.
      const parallel = await Promise.all([1, 2, 3, 4].map(() => o.gql(TOP_UP, { n: 300 })));
      expect(parallel.filter((r) => r.body.data.topUpCredits.__typename === 'MutationTopUpCreditsSuccess')).toHaveLength(2);
      expect((await on.api('GET', '/api/v1/account/credits', { key: t.key })).body.credits_limit).toBe(950);
      expect((await o.gql(ALLOWANCE)).body.data.topUpAllowance).toBe(150);

      const member = await signedInUser(on, t.teamId, 'member');
      expect((await member.gql(TOP_UP, { n: 10 })).body.data.topUpCredits).toMatchObject({ code: 'forbidden' });
      expect((await member.gql(ALLOWANCE)).body.data.topUpAllowance).toBeNull();
      const { graphqlClient } = await import('../support/graphql-client.ts');
      const g = await graphqlClient(on);
      try {
        expect((await g.gql(TOP_UP, { n: 10 }, t.key)).body.data.topUpCredits).toMatchObject({ code: 'forbidden' });
      } finally {
        await g.close();
      }
      expect((await on.api('GET', '/api/v1/account/credits', { key: t.key })).body).toEqual({ credits_used: 0, credits_limit: 950, credits_remaining: 950 });

      // A new period (the operator's reset) brings the whole allowance back.
      await on.app.services.credits.resetPeriod(t.teamId);
      expect((await o.gql(ALLOWANCE)).body.data.topUpAllowance).toBe(1000);
    } finally {
      await on.close();
    }
  });
});
