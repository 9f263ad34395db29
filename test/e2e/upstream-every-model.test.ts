import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MODELS, VIDEO_MODELS } from '../../src/domain/generation-types.ts';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { FAL_LIFECYCLE } from '../../src/adapters/engines/fal/fal-lifecycle.ts';
import { startGeminiFake } from '../support/gemini-fake.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startOpenAiFake } from '../support/openai-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

/*
 * The done line of the upstream engines: with every provider's fake, every ai-video model fal still
 * serves and every image model (GPT on OpenAI, fast and pro on Gemini) completes through REST and
 * through GraphQL, the provider's bytes served from our storage. Sora, retired at fal (its lifecycle
 * table), is refused at create by both.
 */
let fal: FalFake;
let openai: Awaited<ReturnType<typeof startOpenAiFake>>;
let gemini: Awaited<ReturnType<typeof startGeminiFake>>;
let video: Buffer;
let png: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  video = await testVideo({ width: 160, height: 90, seconds: 1 });
  png = await pngBytes(16, 16, '#aa7700');
  fal = await startFalFake({ key: 'fal-every', video, pollsUntilDone: 1 });
  openai = await startOpenAiFake({ key: 'sk-every', video, png });
  gemini = await startGeminiFake({ key: 'gem-every', video, png });
  svc = await startTestService(
    {
      FAL_KEY: 'fal-every',
      FAL_QUEUE_URL: fal.url,
      OPENAI_API_KEY: 'sk-every',
      OPENAI_BASE_URL: openai.url,
      GEMINI_API_KEY: 'gem-every',
      GEMINI_API_URL: gemini.url,
      ENGINE_ROUTES: 'ai-video=fal,gpt-2=openai,gpt-2.5=openai,fast=gemini,pro=gemini,*=local',
      UPSTREAM_POLL_MS: '30',
    },
    { worker: true },
  );
  t = await svc.team({ credits: 1_000_000 });
});
afterAll(async () => {
  await svc?.close();
  await Promise.all([fal?.close(), openai?.close(), gemini?.close()]);
});

// A request each model takes on its provider: ratios and durations inside both the spec and fal.
const videoBody = (model: string, prompt: string): Record<string, unknown> => {
  const m = model;
  const duration = m.startsWith('sora') ? 4 : m.startsWith('veo') ? 4 : m === 'kling-2.6' ? 5 : m === 'kling-o3' ? 3 : 4;
  const body: Record<string, unknown> = { model, prompt, aspect_ratio: '16:9', duration };
  if (m.includes('-frames')) body.first_frame_image_url = 'https://example.com/first.png';
  return body;
};

async function viaGraphql(mutation: 'createAiVideo' | 'createTextToImage', input: Record<string, unknown>): Promise<string> {
  const client = await graphqlClient(svc);
  const type = mutation === 'createAiVideo' ? 'AiVideoInput' : 'TextToImageInput';
  const res = await client.gql(
    `mutation ($input: ${type}!) { ${mutation}(input: $input) { ... on ${mutation === 'createAiVideo' ? 'MutationCreateAiVideoSuccess' : 'MutationCreateTextToImageSuccess'} { data { generation_id } } ... on AppError { code message } } }`,
    { input },
    t.key,
  );
  await client.close();
  expect(res.body.errors, JSON.stringify(res.body)).toBeUndefined();
  const id = res.body.data[mutation].data?.generation_id;
  expect(id, JSON.stringify(res.body.data)).toBeTruthy();
  return id;
}

async function expectServed(id: string, bytes: Buffer) {
  const g = await waitForGeneration(svc, t.key, id);
  expect(g.status, g.error).toBe('completed');
  expect(g.result_url.startsWith(svc.baseUrl)).toBe(true);
  expect((await svc.fetchUrl(g.result_url)).bytes.equals(bytes)).toBe(true);
}

const RETIRED_AT_FAL = new Set(FAL_LIFECYCLE.entries.filter((e) => e.status === 'retired').flatMap((e) => e.serves));

describe('every ai-video model on fal', () => {
  it('Sora 2 and Sora 2 Pro are retired at fal: a 400 at create through REST and GraphQL, nothing sent', async () => {
    expect([...RETIRED_AT_FAL].sort()).toEqual(['sora-2', 'sora-2-pro']);
    for (const model of RETIRED_AT_FAL) {
      const rest = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: videoBody(model, `${model} over rest`) });
      expect(rest.status).toBe(400);
      expect(rest.body.error.message).toBe(`model: ${model} is no longer made by fal, which retired it on 2026-08-02`);
      await expect(viaGraphql('createAiVideo', videoBody(model, `${model} over graphql`))).rejects.toThrow(/no longer made by fal/);
      expect(fal.submits.filter((s) => String(s.input.prompt).startsWith(model))).toEqual([]);
    }
  });

  it.each(VIDEO_MODELS.filter((m) => !RETIRED_AT_FAL.has(m)))('%s completes through REST and GraphQL', async (model) => {
    const rest = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: videoBody(model, `${model} over rest`) });
    expect(rest.status, JSON.stringify(rest.body)).toBe(202);
    const gql = await viaGraphql('createAiVideo', videoBody(model, `${model} over graphql`));
    await expectServed(rest.body.generation_id, video);
    await expectServed(gql, video);
    for (const how of ['rest', 'graphql']) expect(fal.submits.filter((s) => s.input.prompt === `${model} over ${how}`)).toHaveLength(1);
  });
});

describe('every image model on its provider', () => {
  it.each(IMAGE_MODELS)('%s completes through REST and GraphQL', async (model) => {
    const body = (prompt: string) => ({ model, prompt, aspect_ratio: '1:1' });
    const rest = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: body(`${model} image rest`) });
    expect(rest.status, JSON.stringify(rest.body)).toBe(202);
    const gql = await viaGraphql('createTextToImage', body(`${model} image graphql`));
    await expectServed(rest.body.generation_id, png);
    await expectServed(gql, png);
    const seen = model.startsWith('gpt')
      ? openai.imageCreates.map((c) => String(c.prompt))
      : gemini.imageCalls.map((c) => String(c.body.contents[0].parts[0].text));
    for (const how of ['rest', 'graphql']) expect(seen.filter((p) => p === `${model} image ${how}`)).toHaveLength(1);
  });
});
