import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { runCli, stdoutJson } from '../support/cli-run.ts';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { sendBytes, startImageHost } from '../support/image-host.ts';
import { wavSeconds } from '../support/wav.ts';

let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
beforeAll(async () => {
  // The starter tier at 600 tokens a minute, 30 at once: a flood of one key runs out fast.
  svc = await startTestService({ RATE_LIMIT_TIERS: 'starter=600:30' });
  host = await startImageHost({ '/5s.wav': sendBytes(wavSeconds(5), 'audio/wav') });
});
afterAll(async () => {
  await host?.close();
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
      const started = Date.now();
      for (let i = 0; i < 8; i++) answers.push(await gql.gql(mutation, { input: image(i) }, t.key));
      const refilled = Math.floor(((Date.now() - started) / 1000) * 10);
      const refused = answers.filter((a) => a.status === 429);
      const accepted = answers.filter((a) => a.status === 200).length;
      // 29 tokens, 5 a mutation, 10 a second coming back meanwhile (on a machine however slow).
      expect(accepted).toBeGreaterThanOrEqual(5);
      expect(accepted).toBeLessThanOrEqual(Math.max(6, Math.floor((29 + refilled) / 5)));
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

  describe('work is priced, not requests: each root field of each operation of a batch, a quote that downloads media as a write', () => {
    const voice = VOICES[0]!.id;
    const sts = () => ({ audio_url: host.url('/5s.wav'), voice_id: voice });
    /** One operation of `n` aliased root fields. */
    const aliased = (field: string, type: string, n: number) =>
      `query ($input: ${type}!) { ${Array.from({ length: n }, (_, i) => `q${i}: ${field}(input: $input) { __typename }`).join(' ')} }`;
    async function batch(key: string, operations: { query: string; variables: Record<string, unknown> }[]) {
      const gql = await graphqlClient(svc);
      try {
        const res = await gql.fetchFn(gql.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(operations) });
        return { status: res.status, headers: res.headers, body: (await res.json()) as any };
      } finally {
        await gql.close();
      }
    }
    /** A key whose bucket hardly refills (1 token a minute), so what a request took shows exactly. */
    async function slowKey(burst: number) {
      const t = await svc.team({ credits: 1000 });
      await svc.app.services.teams.setRateLimit(t.keyId, { per_minute: 1, burst });
      await new Promise((r) => setTimeout(r, 300)); // the notice reaches the server's key cache
      return t;
    }

    it('one batched request of 5 operations of 15 aliased quotes takes 75 tokens, and 75 speech-to-speech quotes (a write each) are refused whole, before any download', async () => {
      const t = await slowKey(400);
      const tts = { query: aliased('quoteTextToSpeech', 'TextToSpeechInput', 15), variables: { input: { text: 'Big sale today.', voice_id: voice } } };
      const read = await batch(t.key, Array.from({ length: 5 }, () => tts));
      expect(read.status).toBe(200);
      expect(read.body).toHaveLength(5);
      for (const r of read.body) expect(Object.keys(r.data)).toHaveLength(15);
      expect(read.headers.get('ratelimit-remaining')).toBe(String(400 - 75));

      // 75 downloads and probes are 75 writes: 375 tokens, more than the 325 left.
      const hitsBefore = host.hits.length;
      const stsOp = { query: aliased('quoteSpeechToSpeech', 'SpeechToSpeechInput', 15), variables: { input: sts() } };
      const refused = await batch(t.key, Array.from({ length: 5 }, () => stsOp));
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get('ratelimit-limit')).toBe('400');
      expect(refused.body).toHaveLength(5);
      for (const r of refused.body) {
        expect(r.data ?? null).toBeNull();
        expect(r.errors).toEqual([{ message: expect.stringMatching(/^Too many requests with this API key/), extensions: { code: 'rate_limited' } }]);
      }
      expect(host.hits.length).toBe(hitsBefore);
      // A refused request takes nothing.
      const after = await svc.api('GET', '/api/v1/account/credits', { key: t.key });
      expect(after.headers['ratelimit-remaining']).toBe(String(400 - 75 - 1));
    });

    it('a request that costs more than the bucket ever holds is refused and says so', async () => {
      const t = await slowKey(30);
      const stsOp = { query: aliased('quoteSpeechToSpeech', 'SpeechToSpeechInput', 15), variables: { input: sts() } };
      const refused = await batch(t.key, Array.from({ length: 5 }, () => stsOp));
      expect(refused.status).toBe(429);
      expect(refused.body[0].errors[0]).toMatchObject({ message: expect.stringMatching(/costs 375 tokens, more than this API key's bucket holds \(30\)/), extensions: { code: 'rate_limited' } });
    });

    it('a speech-to-speech quote is a write over GraphQL and REST; other quotes stay reads', async () => {
      const t = await slowKey(100);
      const one = await batch(t.key, [{ query: aliased('quoteSpeechToSpeech', 'SpeechToSpeechInput', 1), variables: { input: sts() } }]);
      expect(one.status).toBe(200);
      expect(one.headers.get('ratelimit-remaining')).toBe('95');
      const rest = await svc.api('POST', '/api/v1/quotes/voiceovers/speech-to-speech', { key: t.key, body: sts() });
      expect(rest.status, rest.text).toBe(200);
      expect(rest.headers['ratelimit-remaining']).toBe('90');
      const image = await svc.api('POST', '/api/v1/quotes/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'x', aspect_ratio: '1:1' } });
      expect(image.headers['ratelimit-remaining']).toBe('89');
      // Each root field is priced; fields asked twice under one name run once.
      const twice = await batch(t.key, [{ query: '{ a: credits { credits_used } a: credits { credits_used } b: credits { credits_used } }', variables: {} }]);
      expect(twice.headers.get('ratelimit-remaining')).toBe('87');
    });
  });
});
