import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngBytes } from '../support/image-host.ts';
import { testVideo, videoInfo } from '../support/media-probe.ts';
import { startGeminiFake } from '../support/gemini-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

const GEMINI_KEY = 'AIza-test-gemini-5d1c7e';
let gemini: Awaited<ReturnType<typeof startGeminiFake>>;
let png: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  png = await pngBytes(24, 24, '#33aa66');
  gemini = await startGeminiFake({ key: GEMINI_KEY, video: await testVideo({ width: 320, height: 180, seconds: 1, audio: true }), png, pollsUntilDone: 2 });
  // Google shut its Veo 3.1 preview models down on 2026-10-22, so the start refuses these Veo routes
  // (test/unit/model-lifecycle-start.test.ts); the adapter's Veo path is held to the fake here with them allowed.
  svc = await startTestService(
    { GEMINI_API_KEY: GEMINI_KEY, GEMINI_API_URL: gemini.url, ENGINE_ROUTES: 'veo-3.1=gemini,veo-3.1-fast=gemini,fast=gemini,pro=gemini,*=local', UPSTREAM_POLL_MS: '40' },
    { worker: true, allowRetired: true },
  );
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await gemini?.close();
});

const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const post = (path: string, body: Record<string, unknown>) => svc.api('POST', `/api/v1${path}`, { key: t.key, body });

describe('Veo 3.1 on the Gemini API', () => {
  it('sends frames inline, polls the operation, follows the file URI\'s redirect to the video without the key, and removes the sound it was not asked for', async () => {
    const res = await post('/videos/ai-video', {
      model: 'veo-3.1',
      prompt: 'from frame to frame',
      aspect_ratio: '16:9',
      duration: 8,
      resolution: '1080p',
      first_frame_image_url: `${gemini.base}/frames/a.png`,
      last_frame_image_url: `${gemini.base}/frames/b.png`,
    });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('completed');
    const sent = gemini.videoSubmits.find((s) => s.body.instances[0].prompt === 'from frame to frame')!;
    expect(sent.model).toBe('veo-3.1-generate-preview');
    expect(sent.body).toEqual({
      instances: [
        {
          prompt: 'from frame to frame',
          image: { bytesBase64Encoded: png.toString('base64'), mimeType: 'image/png' },
          lastFrame: { bytesBase64Encoded: png.toString('base64'), mimeType: 'image/png' },
        },
      ],
      parameters: { aspectRatio: '16:9', durationSeconds: 8, resolution: '1080p', sampleCount: 1 },
    });
    const info = await videoInfo((await svc.fetchUrl(g.result_url)).bytes);
    expect(info.audioCodec).toBeNull();
    expect(info.width).toBe(320);
    // Google answers the file URI with a redirect to another host (cookbook: curl --location); the key stays with the API.
    expect(gemini.storageReads.length).toBeGreaterThan(0);
    for (const read of gemini.storageReads) expect(read.headers['x-goog-api-key']).toBeUndefined();
  });

  it('keeps the sound when generate_audio is true', async () => {
    const res = await post('/videos/ai-video', { model: 'veo-3.1-fast', prompt: 'with sound', aspect_ratio: '9:16', duration: 4, generate_audio: true });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('completed');
    expect(gemini.videoSubmits.find((s) => s.body.instances[0].prompt === 'with sound')!.model).toBe('veo-3.1-fast-generate-preview');
    expect((await videoInfo((await svc.fetchUrl(g.result_url)).bytes)).audioCodec).toBe('aac');
  });

  it('4k shorter than 8 seconds is a 400 on this route (Google makes 1080p and 4k at 8 s only); a filtered video fails with the reason and refunds', async () => {
    const before = await used();
    const big = await post('/videos/ai-video', { model: 'veo-3.1', prompt: 'huge', aspect_ratio: '16:9', duration: 4, resolution: '4k' });
    expect(big.status).toBe(400);
    expect(big.body.error.message).toBe('duration: veo-3.1 on Gemini makes 4k videos of 8 seconds only, not 4');
    const reference = await post('/videos/ai-video', { model: 'veo-3.1-fast', prompt: 'a shoe', aspect_ratio: '16:9', duration: 8, reference_image_url: `${gemini.base}/frames/r.png` });
    expect(reference.body.error.message).toBe('reference_image_url: veo-3.1-fast on Gemini takes no reference image');
    const res = await post('/videos/ai-video', { model: 'veo-3.1', prompt: 'forbidden scene', aspect_ratio: '16:9', duration: 4 });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('Gemini refused the request: The prompt could not be submitted: it may violate our policies.');
    expect(await used()).toBe(before);
  });
});

describe('Gemini images', () => {
  it('pro at 2k with quantity 2 makes two calls in Gemini terms and stores both images', async () => {
    const res = await post('/images/text-to-image', { model: 'pro', prompt: 'two cups', aspect_ratio: '4:3', resolution: '2k', quantity: 2 });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('completed');
    const calls = gemini.imageCalls.filter((c) => c.body.contents[0].parts[0].text === 'two cups');
    expect(calls).toHaveLength(2);
    expect(calls[0]).toEqual({
      model: 'gemini-3-pro-image',
      body: { contents: [{ parts: [{ text: 'two cups' }] }], generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '4:3', imageSize: '2K' } } },
    });
    expect(g.result_urls).toHaveLength(2);
    expect((await svc.fetchUrl(g.result_urls[1])).bytes.equals(png)).toBe(true);
  });

  it('fast is Gemini 3.1 Flash Image: 2k is sent as imageSize 2K, 7:3 is a 400; a blocked prompt fails and refunds', async () => {
    const before = await used();
    const wide = await post('/images/text-to-image', { model: 'fast', prompt: 'a wide banner', aspect_ratio: '1:1', resolution: '2k' });
    expect((await waitForGeneration(svc, t.key, wide.body.generation_id)).status).toBe('completed');
    expect(gemini.imageCalls.find((c) => c.body.contents[0].parts[0].text === 'a wide banner')).toMatchObject({ model: 'gemini-3.1-flash-image', body: { generationConfig: { imageConfig: { aspectRatio: '1:1', imageSize: '2K' } } } });
    const odd = await post('/images/text-to-image', { model: 'fast', prompt: 'x', aspect_ratio: '7:3' });
    expect(odd.status).toBe(400);
    expect(odd.body.error.message).toMatch(/^aspect_ratio: fast on Gemini makes 1:1, .*8:1 images, not 7:3$/);
    const afterWide = await used();
    const res = await post('/images/text-to-image', { model: 'fast', prompt: 'forbidden picture', aspect_ratio: '1:1' });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('Gemini refused the request: blocked (SAFETY)');
    expect(await used()).toBe(afterWide);
    expect(afterWide).toBeGreaterThan(before);
    // Every request the adapter sent held to the stored contracts.
    expect(gemini.refusals).toEqual([]);
    expect(svc.logLines.join('\n')).not.toContain(GEMINI_KEY);
  });
});
