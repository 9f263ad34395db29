import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { signedInUser } from '../support/dashboard-session.ts';
import { graphqlClient } from '../support/graphql-client.ts';

let svc: TestService;
let client: Awaited<ReturnType<typeof graphqlClient>>;
beforeAll(async () => {
  svc = await startTestService();
  client = await graphqlClient(svc);
});
afterAll(async () => {
  await client?.close();
  await svc?.close();
});

const Q = 'query ($id: ID!) { generation(id: $id) { id webhook_deliveries { event url ok error } } }';

// Issue 26, Low: a delivery shows the key's webhook URL and what it answered, which only owners
// (and the key whose webhook it is) may see, as only owners list the keys.
describe('Generation.webhook_deliveries', () => {
  it('an owner sees every delivery; the key sees its own webhook only; another key of the team none; a member is refused', async () => {
    const t = await svc.team({ credits: 10 });
    const other = await svc.app.services.teams.createKey(t.teamId, { name: 'second' });
    const gen = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'hooks', aspect_ratio: '1:1' } });
    const id = gen.body.generation_id;
    await svc.app.db
      .insertInto('webhook_deliveries')
      .values({ generation_id: id, api_key_id: t.keyId, event: 'generation.completed', url: 'https://hooks.example/secret-path?token=abc', ok: false, status_code: 500, latency_ms: 42, error: 'HTTP 500' })
      .execute();
    const delivery = { event: 'generation.completed', url: 'https://hooks.example/secret-path?token=abc', ok: false, error: 'HTTP 500' };

    const owner = await signedInUser(svc, t.teamId, 'owner');
    expect((await owner.gql(Q, { id })).body.data.generation.webhook_deliveries).toEqual([delivery]);

    expect((await client.gql(Q, { id }, t.key)).body.data.generation.webhook_deliveries).toEqual([delivery]);
    const second = await client.gql(Q, { id }, other.key);
    expect(second.body.errors).toBeUndefined();
    expect(second.body.data.generation.webhook_deliveries).toEqual([]);

    const member = await signedInUser(svc, t.teamId, 'member');
    const refused = await member.gql(Q, { id });
    expect(refused.body.errors[0].extensions.code).toBe('forbidden');
    expect(JSON.stringify(refused.body)).not.toContain('hooks.example');
    // The member still reads the generation itself.
    expect((await member.gql('query ($id: ID!) { generation(id: $id) { id } }', { id })).body.data.generation.id).toBe(id);
  });
});
