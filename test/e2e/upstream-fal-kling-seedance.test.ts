import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

const FAL_KEY = 'fal-test-key-kling:5e1b77c2a9';
const ROUTES = 'kling-o3=fal,seedance-2.0=fal,seedance-2.0-fast=fal,seedance-2.0-frames=fal,seedance-2.0-frames-fast=fal,*=local';
let fal: FalFake;
let host: Awaited<ReturnType<typeof startImageHost>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let productPng: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;
let brandId: string;
const productIds: string[] = [];

beforeAll(async () => {
  fal = await startFalFake({ key: FAL_KEY, video: await testVideo({ width: 320, height: 180, seconds: 1 }), pollsUntilDone: 1 });
  productPng = await pngBytes(64, 64, '#228844');
  host = await startImageHost({ '/p.png': sendBytes(productPng, 'image/png'), '/logo.png': sendBytes(await pngBytes(16, 16, '#000000'), 'image/png') });
  svc = await startTestService({ FAL_KEY, FAL_QUEUE_URL: fal.url, ENGINE_ROUTES: ROUTES, UPSTREAM_POLL_MS: '40' }, { worker: true });
  t = await svc.team({ credits: 100_000 });
  receiver = await startWebhookReceiver();
  await svc.app.services.teams.setWebhook(t.keyId, receiver.url);
  const brand = await svc.app.db
    .insertInto('brands')
    .values({ team_id: t.teamId, name: 'Acme', logo_url: host.url('/logo.png'), reference_image_url: 'https://brand.example/ref.jpg' })
    .returning('id')
    .executeTakeFirstOrThrow();
  brandId = brand.id;
  for (const name of ['Vase', 'Lamp', 'Chair']) {
    const p = await svc.api('POST', '/api/v1/products', { key: t.key, body: { name, description: 'd', category: 'home', image_url: host.url('/p.png') } });
    expect(p.status).toBe(201);
    productIds.push(p.body.id);
  }
});
afterAll(async () => {
  await svc?.close();
  await fal?.close();
  await host?.close();
  await receiver?.close();
});

const create = (body: Record<string, unknown>) => svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body });
const sent = (prompt: string) => {
  const all = fal.submits.filter((s) => s.input.prompt === prompt);
  expect(all).toHaveLength(1);
  return all[0]!;
};
const completes = async (body: Record<string, unknown>) => {
  const res = await create(body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect((await waitForGeneration(svc, t.key, res.body.generation_id)).status).toBe('completed');
  return sent(String(body.prompt));
};

describe('Kling O3 on fal', () => {
  it('text-to-video on the tier of its quality (pro by default), sound on by default, duration as a string', async () => {
    const s = await completes({ model: 'kling-o3', prompt: 'o3 plain', aspect_ratio: '9:16', duration: 7 });
    expect(s.endpoint).toBe('fal-ai/kling-video/o3/pro/text-to-video');
    expect(s.input).toEqual({ prompt: 'o3 plain', aspect_ratio: '9:16', duration: '7', generate_audio: true });
    const std = await completes({ model: 'kling-o3', prompt: 'o3 standard quiet', aspect_ratio: '1:1', duration: 3, quality: 'standard', generate_audio: false });
    expect(std.endpoint).toBe('fal-ai/kling-video/o3/standard/text-to-video');
    expect(std.input).toMatchObject({ duration: '3', generate_audio: false, aspect_ratio: '1:1' });
  });

  it('frames alone animate on image-to-video (image_url, end_image_url; no ratio: the frame decides)', async () => {
    const s = await completes({
      model: 'kling-o3',
      prompt: 'o3 frames',
      aspect_ratio: '16:9',
      duration: 15,
      quality: '4k',
      first_frame_image_url: 'https://example.com/first.png',
      last_frame_image_url: 'https://example.com/last.png',
    });
    expect(s.endpoint).toBe('fal-ai/kling-video/o3/4k/image-to-video');
    expect(s.input).toEqual({ prompt: 'o3 frames', duration: '15', generate_audio: true, image_url: 'https://example.com/first.png', end_image_url: 'https://example.com/last.png' });
  });

  it('reference, brand and product images go to reference-to-video as image_urls, products as signed links to our copies fal can fetch', async () => {
    const s = await completes({
      model: 'kling-o3',
      prompt: 'o3 with references',
      aspect_ratio: '16:9',
      duration: 5,
      first_frame_image_url: 'https://example.com/first.png',
      reference_image_urls: ['https://example.com/r1.png', 'https://example.com/r2.png'],
      brand_id: brandId,
      product_ids: [productIds[0], '00000000-0000-4000-8000-000000000000'],
    });
    expect(s.endpoint).toBe('fal-ai/kling-video/o3/pro/reference-to-video');
    const urls = s.input.image_urls as string[];
    expect(urls.slice(0, 4)).toEqual(['https://example.com/r1.png', 'https://example.com/r2.png', host.url('/logo.png'), 'https://brand.example/ref.jpg']);
    expect(urls).toHaveLength(5);
    // The product's image is ours, signed: whoever holds the link reads the stored copy.
    expect(urls[4]!.startsWith(`${svc.baseUrl}/files/`)).toBe(true);
    const file = await svc.fetchUrl(urls[4]!);
    expect(file.status).toBe(200);
    expect(file.bytes.length).toBeGreaterThan(0);
    expect(s.input).toMatchObject({ start_image_url: 'https://example.com/first.png', aspect_ratio: '16:9', duration: '5' });
    // No brand text is added to a video prompt.
    expect(s.input.prompt).toBe('o3 with references');
  });

  it('through GraphQL too, with the same shape upstream', async () => {
    const client = await graphqlClient(svc);
    const res = await client.gql(
      `mutation { createAiVideo(input: { model: "kling-o3", prompt: "o3 over graphql", aspect_ratio: "16:9", duration: 4, quality: "standard" }) { ... on MutationCreateAiVideoSuccess { data { generation_id } } ... on AppError { code message } } }`,
      {},
      t.key,
    );
    await client.close();
    const id = res.body.data.createAiVideo.data.generation_id;
    expect((await waitForGeneration(svc, t.key, id)).status).toBe('completed');
    expect(sent('o3 over graphql').endpoint).toBe('fal-ai/kling-video/o3/standard/text-to-video');
  });
});

describe('Seedance 2.0 on fal', () => {
  it('text-to-video with every option in fal terms (resolution, ratio, duration as a string, sound)', async () => {
    const s = await completes({ model: 'seedance-2.0', prompt: 'seedance wide', aspect_ratio: '21:9', duration: 12, resolution: '1080p', generate_audio: true });
    expect(s.endpoint).toBe('bytedance/seedance-2.0/text-to-video');
    expect(s.input).toEqual({ prompt: 'seedance wide', aspect_ratio: '21:9', duration: '12', resolution: '1080p', generate_audio: true });
    const fast = await completes({ model: 'seedance-2.0-fast', prompt: 'seedance fast auto', aspect_ratio: 'auto', duration: 4 });
    expect(fast.endpoint).toBe('bytedance/seedance-2.0/fast/text-to-video');
    expect(fast.input).toEqual({ prompt: 'seedance fast auto', aspect_ratio: 'auto', duration: '4', resolution: '720p', generate_audio: false });
  });

  it('references (URLs, brand, products) go to reference-to-video as image_urls', async () => {
    const s = await completes({
      model: 'seedance-2.0-fast',
      prompt: 'seedance refs',
      aspect_ratio: '9:16',
      duration: 6,
      resolution: '480p',
      reference_image_urls: ['https://example.com/s1.png'],
      product_ids: productIds.slice(0, 2),
    });
    expect(s.endpoint).toBe('bytedance/seedance-2.0/fast/reference-to-video');
    const urls = s.input.image_urls as string[];
    expect(urls[0]).toBe('https://example.com/s1.png');
    expect(urls.slice(1).every((u) => u.startsWith(`${svc.baseUrl}/files/`))).toBe(true);
    expect(urls).toHaveLength(3);
    expect(s.input).toMatchObject({ resolution: '480p', duration: '6', aspect_ratio: '9:16' });
  });

  it('the -frames variants animate image_url to end_image_url on image-to-video', async () => {
    const both = await completes({
      model: 'seedance-2.0-frames',
      prompt: 'seedance two frames',
      aspect_ratio: '4:3',
      duration: 8,
      first_frame_image_url: 'https://example.com/f1.png',
      last_frame_image_url: 'https://example.com/f2.png',
    });
    expect(both.endpoint).toBe('bytedance/seedance-2.0/image-to-video');
    expect(both.input).toEqual({ prompt: 'seedance two frames', aspect_ratio: '4:3', duration: '8', resolution: '720p', generate_audio: false, image_url: 'https://example.com/f1.png', end_image_url: 'https://example.com/f2.png' });
    const one = await completes({ model: 'seedance-2.0-frames-fast', prompt: 'seedance one frame', aspect_ratio: '3:4', duration: 15, first_frame_image_url: 'https://example.com/f1.png' });
    expect(one.endpoint).toBe('bytedance/seedance-2.0/fast/image-to-video');
    expect(one.input).toMatchObject({ image_url: 'https://example.com/f1.png', duration: '15' });
    expect(one.input).not.toHaveProperty('end_image_url');
  });

  it('refuses at create what fal cannot make: references beside frames, more than 9 images; nothing charged or sent', async () => {
    const count = fal.submits.length;
    const frames = await create({
      model: 'seedance-2.0-frames',
      prompt: 'frames and refs',
      aspect_ratio: '16:9',
      duration: 5,
      first_frame_image_url: 'https://example.com/f1.png',
      reference_image_urls: ['https://example.com/x.png'],
    });
    expect(frames.status).toBe(400);
    expect(frames.body.error).toEqual({
      code: 'validation_error',
      message: 'reference_image_urls: seedance-2.0-frames on fal animates the first and last frames only; reference, brand and product images need seedance-2.0 or seedance-2.0-fast',
    });
    const many = await create({
      model: 'seedance-2.0',
      prompt: 'too many images',
      aspect_ratio: '16:9',
      duration: 5,
      reference_image_url: 'https://example.com/one.png',
      reference_image_urls: ['https://example.com/1.png', 'https://example.com/2.png', 'https://example.com/3.png', 'https://example.com/4.png'],
      brand_id: brandId,
      product_ids: productIds,
    });
    expect(many.status).toBe(400);
    expect(many.body.error.message).toBe('reference_image_urls: seedance-2.0 on fal takes at most 9 images in all; this request attaches 10 (reference URLs, brand and product images)');
    // Foreign ids count for nothing: the same request without the brand fits.
    const { credits_used } = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    const fits = await create({ model: 'seedance-2.0', prompt: 'just fits', aspect_ratio: '16:9', duration: 5, reference_image_urls: ['https://example.com/1.png'], brand_id: '00000000-0000-4000-8000-000000000001', product_ids: productIds });
    expect(fits.status).toBe(202);
    expect(fal.submits.filter((s) => s.input.prompt === 'frames and refs' || s.input.prompt === 'too many images')).toHaveLength(0);
    expect((await waitForGeneration(svc, t.key, fits.body.generation_id)).status).toBe('completed');
    expect((sent('just fits').input.image_urls as string[]).length).toBe(4);
    expect(fal.submits.length).toBe(count + 1);
    const after = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(after.credits_used).toBeGreaterThan(credits_used);
  });
});

describe('what the team sees of an upstream generation', () => {
  it('sent fal nothing its stored contracts refuse (test/contracts/fal)', () => {
    expect(fal.invalid).toEqual([]);
  });

  it('its webhook: generation.completed with our result link, and no provider key in any webhook, log line or row', async () => {
    const res = await create({ model: 'seedance-2.0', prompt: 'webhook after fal', aspect_ratio: '1:1', duration: 4 });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('completed');
    await expect.poll(() => receiver.received.filter((r) => r.raw.includes(res.body.generation_id)).length, { timeout: 10_000 }).toBe(1);
    const body = JSON.parse(receiver.received.find((r) => r.raw.includes(res.body.generation_id))!.raw.toString());
    expect(body).toMatchObject({ event: 'generation.completed', generation_id: res.body.generation_id, type: 'ai-video', status: 'completed' });
    expect(String(body.result_url).startsWith(`${svc.baseUrl}/files/`)).toBe(true);
    const rows = JSON.stringify([
      await svc.app.db.selectFrom('upstream_jobs').selectAll().execute(),
      await svc.app.db.selectFrom('upstream_job_events').selectAll().execute(),
      await svc.app.db.selectFrom('generations').select(['params', 'error']).execute(),
    ]);
    for (const text of [rows, svc.logLines.join('\n'), ...receiver.received.map((r) => r.raw.toString())]) {
      expect(text).not.toContain(FAL_KEY);
      expect(text).not.toContain('5e1b77c2a9');
    }
  });
});
