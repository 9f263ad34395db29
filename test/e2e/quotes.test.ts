import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { wavSeconds } from '../support/wav.ts';

// POST /quotes/<create path>: for every priced create, the quote is what the create then charges,
// and the quote itself stores and charges nothing.
let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
let team: Awaited<ReturnType<TestService['team']>>;
let bodies: Record<string, unknown>;
const voice = VOICES[0]!.id;

beforeAll(async () => {
  svc = await startTestService();
  gql = await graphqlClient(svc);
  host = await startImageHost({ '/p.png': sendBytes(await pngBytes(), 'image/png'), '/45s.wav': sendBytes(wavSeconds(45), 'audio/wav') });
  team = await svc.team({ credits: 100_000 });
  const product = (await svc.api('POST', '/api/v1/products', { key: team.key, body: { name: 'Mug', description: 'd', category: 'c', image_url: host.url('/p.png') } })).body.id;
  const avatar = (await svc.api('GET', '/api/v1/avatars', { key: team.key })).body.data[0].id;
  const video = 'https://example.com/v.mp4';
  bodies = {
    '/videos/talking-avatar': { avatar_id: avatar, avatar_type: 'platform', script: 'Hi there, meet our shoe. '.repeat(14), voice_id: voice },
    '/videos/ai-video': { model: 'veo-3.1-fast', prompt: 'a shoe on a rock', aspect_ratio: '16:9', duration: 8 },
    '/videos/swap-avatar': { video_url: video, duration: 10, width: 720, height: 1280, image_url: host.url('/p.png'), mode: 'pro' },
    '/videos/localize': { video_url: video, output_language: 'es', width: 1280, height: 720, duration: 37, mode: 'precision' },
    '/videos/edit': { template_id: 'bold-pop', video_url: video },
    '/images/text-to-image': { model: 'pro', prompt: 'a shoe', aspect_ratio: '4:5', quantity: 3 },
    '/images/product-shots': { model: 'fast', aspect_ratio: '1:1', product_id: product, style_id: 'studio-white', quantity: 2 },
    '/images/edit': { model: 'fast', prompt: 'warmer', aspect_ratio: '1:1', reference_image_urls: [host.url('/p.png')] },
    '/voiceovers/text-to-speech': { text: 'Big sale today.', voice_id: voice },
    '/voiceovers/speech-to-speech': { audio_url: host.url('/45s.wav'), voice_id: voice },
  };
}, 60_000);
afterAll(async () => {
  await gql?.close();
  await host?.close();
  await svc?.close();
});

async function state(teamId: string) {
  const r = await sql<{ used: number; generations: number; voiceovers: number; keys: number; ledger: number }>`
    select (select credits_used from teams where id = ${teamId}) as used,
           (select count(*)::int from generations where team_id = ${teamId}) as generations,
           (select count(*)::int from voiceovers where team_id = ${teamId}) as voiceovers,
           (select count(*)::int from idempotency_keys where team_id = ${teamId}) as keys,
           (select count(*)::int from credit_ledger where team_id = ${teamId}) as ledger`.execute(svc.app.db);
  return r.rows[0]!;
}

describe('POST /quotes/<create path>', () => {
  it('for every priced create: the quote is what the create then charges, and the quote changes nothing', async () => {
    for (const [path, body] of Object.entries(bodies)) {
      const before = await state(team.teamId);
      const quote = await svc.api('POST', `/api/v1/quotes${path}`, { key: team.key, body, headers: { 'idempotency-key': `q-${path}` } });
      expect(quote.status, path).toBe(200);
      expect(quote.body).toEqual({ credits: expect.any(Number), credits_remaining: 100_000 - before.used, affordable: true });
      expect(quote.body.credits, path).toBeGreaterThan(0);
      expect(await state(team.teamId), path).toEqual(before);
      const created = await svc.api('POST', `/api/v1${path}`, { key: team.key, body });
      expect([200, 201, 202], `${path}: ${created.text}`).toContain(created.status);
      expect((await state(team.teamId)).used - before.used, path).toBe(quote.body.credits);
    }
  }, 120_000);

  it('says when the balance does not cover it, and refuses bad input exactly as the create does', async () => {
    const poor = await svc.team({ credits: 5 });
    const body = bodies['/images/text-to-image'];
    const quote = await svc.api('POST', '/api/v1/quotes/images/text-to-image', { key: poor.key, body });
    expect(quote.body).toMatchObject({ credits_remaining: 5, affordable: false });
    expect((await svc.api('POST', '/api/v1/images/text-to-image', { key: poor.key, body })).status).toBe(402);

    const cases: [string, unknown][] = [
      ['/images/text-to-image', { model: 'nope', prompt: 'x', aspect_ratio: '1:1' }],
      ['/videos/talking-avatar', { ...(bodies['/videos/talking-avatar'] as object), avatar_id: '00000000-0000-4000-8000-000000000000' }],
      ['/voiceovers/text-to-speech', { text: 'x', voice_id: 'no-such-voice' }],
      ['/images/product-shots', { model: 'fast', aspect_ratio: '1:1', product_id: '00000000-0000-4000-8000-000000000000', style_id: 'studio-white' }],
    ];
    for (const [path, bad] of cases) {
      const q = await svc.api('POST', `/api/v1/quotes${path}`, { key: poor.key, body: bad });
      const c = await svc.api('POST', `/api/v1${path}`, { key: poor.key, body: bad });
      expect([q.status, q.body], path).toEqual([c.status, c.body]);
      expect(q.status, path).toBeGreaterThanOrEqual(400);
    }
    expect((await svc.api('POST', '/api/v1/quotes/images/text-to-image', { body })).status).toBe(401);
    expect((await svc.api('POST', '/api/v1/quotes/videos/nope', { key: poor.key, body })).status).toBe(404);
    expect(await state(poor.teamId)).toMatchObject({ used: 0, generations: 0, voiceovers: 0, keys: 0, ledger: 0 });
  });

  it('a scrape: its price for a new page, nothing for a page being scraped, as the scrape then charges', async () => {
    const t = await svc.team({ credits: 100 });
    const body = { url: 'https://www.facebook.com/ads/library/?active_status=all&ad_type=all&country=ALL&view_all_page_id=918273645' };
    const first = await svc.api('POST', '/api/v1/quotes/ad-library/scrape', { key: t.key, body });
    expect(first.body).toEqual({ credits: 10, credits_remaining: 100, affordable: true });
    expect((await svc.api('POST', '/api/v1/ad-library/scrape', { key: t.key, body })).status).toBe(202);
    expect((await state(t.teamId)).used).toBe(10);
    const again = await svc.api('POST', '/api/v1/quotes/ad-library/scrape', { key: t.key, body });
    expect(again.body).toEqual({ credits: 0, credits_remaining: 90, affordable: true });
    expect((await svc.api('POST', '/api/v1/ad-library/scrape', { key: t.key, body })).body.status).toBe('processing');
    expect((await state(t.teamId)).used).toBe(10);
    const bad = await svc.api('POST', '/api/v1/quotes/ad-library/scrape', { key: t.key, body: { url: 'https://example.com/x' } });
    expect(bad.status).toBe(400);
    const gq = await gql.gql(`query ($url: String!) { quoteAdLibraryScrape(url: $url) { ... on QueryQuoteAdLibraryScrapeSuccess { data { credits } } } }`, { url: body.url }, t.key);
    expect(gq.body.data.quoteAdLibraryScrape.data.credits).toBe(0);
  });

  it('GraphQL quote<Name>(input) answers the same as REST', async () => {
    const input = bodies['/images/text-to-image'];
    const res = await gql.gql(
      `query ($input: TextToImageInput!) { quoteTextToImage(input: $input) { __typename ... on QueryQuoteTextToImageSuccess { data { credits credits_remaining affordable } } ... on AppError { code message } } }`,
      { input },
      team.key,
    );
    const rest = await svc.api('POST', '/api/v1/quotes/images/text-to-image', { key: team.key, body: input });
    expect(res.body.data.quoteTextToImage.data).toEqual(rest.body);
    const bad = await gql.gql(
      `query ($input: TextToSpeechInput!) { quoteTextToSpeech(input: $input) { __typename ... on AppError { code message } } }`,
      { input: { text: 'x', voice_id: 'no-such-voice' } },
      team.key,
    );
    expect(bad.body.data.quoteTextToSpeech).toMatchObject({ code: 'not_found' });
  });
});
