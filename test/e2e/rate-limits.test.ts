import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { runCli, stdoutJson } from '../support/cli-run.ts';
import { graphqlClient } from '../support/graphql-client.ts';

let svc: TestService;
beforeAll(async () => {
  // The starter tier at 600 tokens a minute, 30 at once: a flood of one key runs out fast.
  svc = await startTestService({ RATE_LIMIT_TIERS: 'starter=600:30' });
});
afterAll(async () => {
  await svc?.close();
});

const image = (n: number) => ({ model: 'fast', prompt: `shot ${n}`, aspect_ratio: '1:1' });

describe('rate limits per API key (a token bucket; reads take 1, writes 5)', () => {
  it('a flooding key gets 429 rate_limited with Retry-After, is charged nothing for it, and the others are served', async () => {
    const t = await svc.team({ credits: 1000 });
    const other = await svc.app.services.teams.createKey(t.teamId);
    const started = Date.now();
    const flood = await Promise.all(Array.from({ length: 20 }, (_, i) => svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: image(i) })));
    // What the bucket refilled while they ran (10 tokens a second), on a machine however slow.
    const refilled = Math.floor(((Date.now() - started) / 1000) * 10);
    const accepted = flood.filter((r) => r.status === 202);
    const refused = flood.filter((r) => r.status === 429);
    expect(accepted.length + refused.length).toBe(20);
    // 30 tokens, 5 a create, and the refill while they ran.
    expect(accepted.length).toBeGreaterThanOrEqual(6);
    expect(accepted.length).toBeLessThanOrEqual(Math.max(7, Math.floor((30 + refilled) / 5)));
    const r = refused[0]!;
    expect(r.body.error).toEqual({ code: 'rate_limited', message: expect.stringMatching(/^Too many requests with this API key: retry in \d+ s$/) });
    expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(r.headers).toMatchObject({ 'ratelimit-limit': '30', 'ratelimit-remaining': '0' });
    for (const a of accepted) expect(a.headers['ratelimit-limit']).toBe('30');

    // Charged exactly for what was accepted.
    const credits = (await svc.api('GET', '/api/v1/account/credits', { key: other.key })).body;
    expect(credits.credits_used).toBe(accepted.length);
    const generations = await svc.app.db.selectFrom('generations').select('id').where('team_id', '=', t.teamId).execute();
    expect(generations).toHaveLength(accepted.length);

    // Another key of the same team, and another team, are served meanwhile.
    expect((await svc.api('POST', '/api/v1/images/text-to-image', { key: other.key, body: image(99) })).status).toBe(202);
    const stranger = await svc.team();
    expect((await svc.api('GET', '/api/v1/products', { key: stranger.key })).status).toBe(200);
    // Reads cost less: the flooded key is refused, its remaining tokens say so.
    const read = await svc.api('GET', '/api/v1/products', { key: t.key });
    expect([200, 429]).toContain(read.status);
  });

  it('every answer says where the bucket stands; a read takes 1 token, a quote is a read', async () => {
    const t = await svc.team({ credits: 1000 });
    const a = await svc.api('GET', '/api/v1/account/credits', { key: t.key });
    expect(a.headers).toMatchObject({ 'ratelimit-limit': '30', 'ratelimit-remaining': '29', 'ratelimit-policy': '30;w=3' });
    const q = await svc.api('POST', '/api/v1/quotes/images/text-to-image', { key: t.key, body: image(1) });
    expect(q.headers['ratelimit-remaining']).toBe('28');
    const c = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: image(1) });
    expect(Number(c.headers['ratelimit-remaining'])).toBeGreaterThanOrEqual(23);
    expect(Number(c.headers['ratelimit-remaining'])).toBeLessThanOrEqual(24);
    // Errors carry them too.
    const bad = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'nope' } });
    expect(bad.status).toBe(400);
    expect(bad.headers['ratelimit-limit']).toBe('30');
  });

  it('adforge key set-limit gives one key its own bucket, at once on the running server, and --tier takes it back', async () => {
    const t = await svc.team({ credits: 1000 });
    const set = await runCli(['key', 'set-limit', t.keyId, '--per-minute', '60', '--burst', '2', '--json'], { DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.dataDir });
    expect(set.code).toBe(0);
    expect(stdoutJson(set)).toMatchObject({ id: t.keyId, rate_limit: { per_minute: 60, burst: 2 } });
    await new Promise((r) => setTimeout(r, 300)); // the notice reaches the server's key cache
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await svc.api('GET', '/api/v1/products', { key: t.key }));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(answers[0]!.headers['ratelimit-limit']).toBe('2');

    const bad = await runCli(['key', 'set-limit', t.keyId, '--per-minute', '0', '--burst', '2', '--json'], { DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.dataDir });
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toMatch(/per_minute: must be a whole number from 1 to 1000000/);

    const back = await runCli(['key', 'set-limit', t.keyId, '--tier', '--json'], { DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.dataDir });
    expect(stdoutJson(back)).toMatchObject({ rate_limit: null });
    await new Promise((r) => setTimeout(r, 300));
    expect((await svc.api('GET', '/api/v1/products', { key: t.key })).headers['ratelimit-limit']).toBe('30');
  });

  it('GraphQL draws from the same bucket: a mutation a write, a query a read; an empty bucket is 429 with a rate_limited error and nothing done', async () => {
    const t = await svc.team({ credits: 1000 });
    const gql = await graphqlClient(svc);
    try {
      const q = await gql.gql('{ credits { credits_used } }', {}, t.key);
      expect(q.headers.get('ratelimit-remaining')).toBe('29');
      const mutation = `mutation ($input: TextToImageInput!) { createTextToImage(input: $input) { __typename } }`;
      const answers = [];
      for (let i = 0; i < 8; i++) answers.push(await gql.gql(mutation, { input: image(i) }, t.key));
      const refused = answers.filter((a) => a.status === 429);
      const accepted = answers.filter((a) => a.status === 200).length;
      // 29 tokens, 5 a mutation, 10 a second coming back meanwhile.
      expect(accepted).toBeGreaterThanOrEqual(5);
      expect(accepted).toBeLessThanOrEqual(6);
      expect(refused.length).toBe(8 - accepted);
      expect(refused[0]!.body.errors[0]).toMatchObject({ message: expect.stringMatching(/^Too many requests with this API key/), extensions: { code: 'rate_limited' } });
      expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // REST sees the same empty bucket; nothing refused was charged.
      expect((await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: image(9) })).status).toBe(429);
      const used = (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
      expect(used).toBe(accepted);
    } finally {
      await gql.close();
    }
  });
});
