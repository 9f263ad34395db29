import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient } from '../support/graphql-client.ts';
import sharp from 'sharp';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startOpenAiFake } from '../support/openai-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

const OPENAI_KEY = 'sk-test-openai-9c2e41f0a7';
let openai: Awaited<ReturnType<typeof startOpenAiFake>>;
let video: Buffer;
let png: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  video = await testVideo({ width: 320, height: 180, seconds: 1 });
  png = await pngBytes(32, 32, '#cc3366');
  openai = await startOpenAiFake({ key: OPENAI_KEY, video, png, pollsUntilDone: 2 });
  svc = await startTestService(
    { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: openai.url, OPENAI_IMAGE_MODELS: 'gpt-2.5=gpt-image-1.5', ENGINE_ROUTES: 'sora-2=openai,sora-2-pro=openai,gpt-2=openai,gpt-2.5=openai,*=local', UPSTREAM_POLL_MS: '40' },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await openai?.close();
});

const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const post = (path: string, body: Record<string, unknown>) => svc.api('POST', `/api/v1${path}`, { key: t.key, body });

describe('Sora on the OpenAI Videos API', () => {
  it('creates in OpenAI terms, polls, downloads the content with the key and completes', async () => {
    const res = await post('/videos/ai-video', { model: 'sora-2', prompt: 'a red kite', aspect_ratio: '16:9', duration: 8 });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('completed');
    expect(openai.videoCreates.find((c) => c.prompt === 'a red kite')).toEqual({ model: 'sora-2', prompt: 'a red kite', seconds: '8', size: '1280x720' });
    expect((await svc.fetchUrl(g.result_url)).bytes.equals(video)).toBe(true);
    const client = await graphqlClient(svc);
    const gq = await client.gql(`query ($id: ID!) { generation(id: $id) { status upstream_attempts { provider state } } }`, { id: res.body.generation_id }, t.key);
    expect(gq.body.data.generation).toEqual({ status: 'completed', upstream_attempts: [{ provider: 'openai', state: 'succeeded' }] });
    await client.close();
  });

  it('sora-2-pro with hd in portrait asks for 1024x1792', async () => {
    const res = await post('/videos/ai-video', { model: 'sora-2-pro', prompt: 'tall and sharp', aspect_ratio: '9:16', duration: 12, hd: true });
    expect((await waitForGeneration(svc, t.key, res.body.generation_id)).status).toBe('completed');
    expect(openai.videoCreates.find((c) => c.prompt === 'tall and sharp')).toMatchObject({ model: 'sora-2-pro', seconds: '12', size: '1024x1792' });
  });

  it('a reference image becomes input_reference, fitted to the exact size of the video', async () => {
    const host = await startImageHost({ '/ref.png': sendBytes(await pngBytes(300, 100, '#00aa00'), 'image/png') });
    try {
      const res = await post('/videos/ai-video', { model: 'sora-2', prompt: 'from a picture', aspect_ratio: '9:16', duration: 4, reference_image_url: host.url('/ref.png') });
      expect((await waitForGeneration(svc, t.key, res.body.generation_id)).status).toBe('completed');
    } finally {
      await host.close();
    }
    expect(openai.videoCreates.find((c) => c.prompt === 'from a picture')).toEqual({ model: 'sora-2', prompt: 'from a picture', seconds: '4', size: '720x1280' });
    const ref = openai.videoReferences.get('from a picture')!;
    expect(ref.type).toBe('image/png');
    expect(await sharp(ref.bytes).metadata()).toMatchObject({ width: 720, height: 1280, format: 'png' });
  });

  it('a duration OpenAI does not make is a 400 at create, nothing charged', async () => {
    const before = await used();
    const res = await post('/videos/ai-video', { model: 'sora-2', prompt: 'too long', aspect_ratio: '16:9', duration: 16 });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'validation_error', message: 'duration: sora-2 on OpenAI makes 4, 8, 12 second videos, not 16' });
    expect(await used()).toBe(before);
  });

  it('a moderation failure fails the generation with OpenAI\'s message and refunds it', async () => {
    const before = await used();
    const res = await post('/videos/ai-video', { model: 'sora-2', prompt: 'something forbidden', aspect_ratio: '16:9', duration: 4 });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('OpenAI could not make the video: Your request was blocked by our moderation system.');
    expect(await used()).toBe(before);
  });
});

describe('GPT images on the OpenAI Images API', () => {
  it('text-to-image with quantity 2 makes two images in one call, stored as ours', async () => {
    const res = await post('/images/text-to-image', { model: 'gpt-2.5', prompt: 'two mugs', aspect_ratio: '16:9', quantity: 2, effort: 'xhigh' });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('completed');
    expect(openai.imageCreates.find((c) => c.prompt === 'two mugs')).toEqual({ model: 'gpt-image-1.5', prompt: 'two mugs', n: 2, size: '1536x1024', quality: 'high' });
    expect(g.result_urls).toHaveLength(2);
    for (const u of g.result_urls) expect((await svc.fetchUrl(u)).bytes.equals(png)).toBe(true);
  });

  it('gpt-2 at the default effort asks for medium quality, square', async () => {
    const res = await post('/images/text-to-image', { model: 'gpt-2', prompt: 'one square', aspect_ratio: '1:1' });
    expect((await waitForGeneration(svc, t.key, res.body.generation_id)).status).toBe('completed');
    expect(openai.imageCreates.find((c) => c.prompt === 'one square')).toEqual({ model: 'gpt-image-1', prompt: 'one square', n: 1, size: '1024x1024', quality: 'medium' });
  });

  it('a 2k image is a 400 at create; a refusal fails and refunds', async () => {
    const before = await used();
    const big = await post('/images/text-to-image', { model: 'gpt-2', prompt: 'big', aspect_ratio: '1:1', resolution: '2k' });
    expect(big.status).toBe(400);
    expect(big.body.error.message).toBe('resolution: gpt-2 on OpenAI makes 1k images only, not 2k');
    const res = await post('/images/text-to-image', { model: 'gpt-2', prompt: 'a forbidden thing', aspect_ratio: '1:1' });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('OpenAI refused the request: Your request was rejected by the safety system.');
    expect(await used()).toBe(before);
  });

  it('never shows the OpenAI key', async () => {
    const rows = JSON.stringify(await svc.app.db.selectFrom('upstream_jobs').selectAll().execute());
    const events = JSON.stringify(await svc.app.db.selectFrom('upstream_job_events').selectAll().execute());
    for (const text of [svc.logLines.join('\n'), rows, events]) expect(text).not.toContain(OPENAI_KEY);
  });
});
