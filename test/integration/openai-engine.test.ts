import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiEngine } from '../../src/adapters/engines/openai/openai-engine.ts';
import type { Engine, UpstreamFile, UpstreamRequest, UpstreamStatus } from '../../src/adapters/engines/engine-contract.ts';
import { pngBytes } from '../support/image-host.ts';
import { startOpenAiFake } from '../support/openai-fake.ts';
import { memoryFile } from '../support/upstream-file.ts';

/*
 * The OpenAI engine against its contract-held fake, without the service: the Videos (Sora) path,
 * which the start no longer routes to (OpenAI retired it on 2026-09-24) but which stays for an
 * account OpenAI still serves, and the Images requests per model.
 */
const KEY = 'sk-engine-openai-77c1';
let fake: Awaited<ReturnType<typeof startOpenAiFake>>;
let retiredFake: Awaited<ReturnType<typeof startOpenAiFake>>;
let engine: Engine;
const video = Buffer.from('not really an mp4, but bytes the engine must hand back unchanged');

beforeAll(async () => {
  const png = await pngBytes(8, 8, '#aa0000');
  fake = await startOpenAiFake({ key: KEY, video, png, pollsUntilDone: 1 });
  retiredFake = await startOpenAiFake({ key: KEY, video, png, videosRetired: true });
  engine = createOpenAiEngine({ baseUrl: fake.url, apiKey: KEY, allowPrivate: true });
});
afterAll(async () => {
  await fake?.close();
  await retiredFake?.close();
});
// Nothing the engine sends may break the contract.
afterEach(() => expect(fake.refused.filter((r) => r.status === 400 && r.error.code !== 'moderation_blocked')).toEqual([]));

const file = (bytes: Buffer, mime: string): UpstreamFile => memoryFile(bytes, mime, 'https://example.test/ref');
const request = (operation: UpstreamRequest['operation'], params: Record<string, unknown>, references: UpstreamFile[] = []): UpstreamRequest => ({
  generationId: 'g-1',
  operation,
  params,
  inputs: { prompt: String(params.prompt), references, brandImages: [], productImages: [] },
});
const signal = () => AbortSignal.timeout(10_000);

async function run(e: Engine, req: UpstreamRequest): Promise<UpstreamStatus> {
  const sub = await e.submit(req, { id: 'a-1' }, signal());
  if (sub.done) return sub.done;
  for (let i = 0; i < 10; i++) {
    const s = await e.poll(sub.handle, signal());
    if (s.state !== 'pending') return s;
  }
  throw new Error('never finished');
}

describe('Sora on the OpenAI Videos API (kept for an account OpenAI still serves)', () => {
  it('creates in OpenAI terms, polls, downloads the content with the key', async () => {
    const s = await run(engine, request('ai-video', { model: 'sora-2', prompt: 'a red kite', aspect_ratio: '16:9', duration: 8 }));
    expect(fake.videoCreates.find((c) => c.prompt === 'a red kite')).toEqual({ model: 'sora-2', prompt: 'a red kite', seconds: '8', size: '1280x720' });
    expect(s.state).toBe('succeeded');
    const out = (s as Extract<UpstreamStatus, { state: 'succeeded' }>).outputs[0] as { open: (s: AbortSignal) => Promise<Readable> };
    expect((await buffer(await out.open(signal()))).equals(video)).toBe(true);
  });

  it('sora-2-pro with hd in portrait asks for 1024x1792; a reference becomes input_reference fitted to that size', async () => {
    const ref = await pngBytes(300, 100, '#00aa00');
    expect((await run(engine, request('ai-video', { model: 'sora-2-pro', prompt: 'tall and sharp', aspect_ratio: '9:16', duration: 12, hd: true }, [file(ref, 'image/png')]))).state).toBe('succeeded');
    expect(fake.videoCreates.find((c) => c.prompt === 'tall and sharp')).toEqual({ model: 'sora-2-pro', prompt: 'tall and sharp', seconds: '12', size: '1024x1792' });
    const sent = fake.videoReferences.get('tall and sharp')!;
    expect(sent.type).toBe('image/png');
    expect(await sharp(sent.bytes).metadata()).toMatchObject({ width: 1024, height: 1792, format: 'png' });
  });

  it("a moderation failure is the generation's failure, in OpenAI's words", async () => {
    expect(await run(engine, request('ai-video', { model: 'sora-2', prompt: 'something forbidden', aspect_ratio: '16:9', duration: 4 }))).toEqual({
      state: 'failed',
      message: 'OpenAI could not make the video: Your request was blocked by our moderation system.',
    });
  });

  it('once OpenAI has shut the API down, the refusal says so with the date (and suggests no route: fal retired Sora too)', async () => {
    const gone = createOpenAiEngine({ baseUrl: retiredFake.url, apiKey: KEY, allowPrivate: true });
    await expect(gone.submit(request('ai-video', { model: 'sora-2', prompt: 'too late', aspect_ratio: '16:9', duration: 4 }), { id: 'a-2' }, signal())).rejects.toMatchObject({
      failure: 'refused',
      message: 'OpenAI refused the request: Invalid URL (POST /v1/videos) (OpenAI shut its Videos (Sora) API down on 2026-09-24)',
    });
  });
});

describe('GPT images per model', () => {
  it('gpt-2 asks gpt-image-2 at 1k for the standard size nearest the ratio (4:5: the portrait one)', async () => {
    expect((await run(engine, request('text-to-image', { model: 'gpt-2', prompt: 'a portrait', aspect_ratio: '4:5', quantity: 1, resolution: '1k', effort: 'medium' }))).state).toBe('succeeded');
    expect(fake.imageCreates.find((c) => c.prompt === 'a portrait')).toEqual({ model: 'gpt-image-2', prompt: 'a portrait', n: 1, size: '1024x1536', quality: 'medium' });
  });

  it('gpt-2.5 at 2k asks gpt-image-2 for the ratio itself, long side 2048, sides divisible by 16', async () => {
    expect((await run(engine, request('text-to-image', { model: 'gpt-2.5', prompt: 'wide 2k', aspect_ratio: '16:9', quantity: 2, resolution: '2k', effort: 'max' }))).state).toBe('succeeded');
    expect(fake.imageCreates.find((c) => c.prompt === 'wide 2k')).toEqual({ model: 'gpt-image-2', prompt: 'wide 2k', n: 2, size: '2048x1152', quality: 'high' });
  });

  it('an edit sends png, jpeg and webp as they are, and any other image (a GIF, an unlabelled JPEG) as what OpenAI takes', async () => {
    const png = await pngBytes(20, 20, '#0000ff');
    const jpeg = await sharp(png).jpeg().toBuffer();
    const gif = await sharp(png).gif().toBuffer();
    const refs = [file(png, 'image/png'), file(jpeg, 'application/octet-stream'), file(gif, 'image/gif')];
    expect((await run(engine, request('image-edit', { model: 'gpt-2', prompt: 'three refs', aspect_ratio: '1:1', quantity: 1, resolution: '1k', effort: 'low' }, refs))).state).toBe('succeeded');
    const edit = fake.imageEdits.find((e) => e.fields.prompt === 'three refs')!;
    expect(edit.fields).toEqual({ model: 'gpt-image-2', prompt: 'three refs', n: '1', size: '1024x1024', quality: 'low' });
    expect(edit.images.map((i) => [i.field, i.type])).toEqual([
      ['image[]', 'image/png'],
      ['image[]', 'image/jpeg'],
      ['image[]', 'image/png'],
    ]);
    expect(edit.images[0]!.bytes.equals(png)).toBe(true);
    expect(edit.images[1]!.bytes.equals(jpeg)).toBe(true);
    expect((await sharp(edit.images[2]!.bytes).metadata()).format).toBe('png');
  });

  it('an input that is no image is refused before anything reaches OpenAI', async () => {
    const before = fake.imageEdits.length;
    await expect(engine.submit(request('image-edit', { model: 'gpt-2', prompt: 'not an image', aspect_ratio: '1:1', quantity: 1, resolution: '1k' }, [file(Buffer.from('hello'), 'image/png')]), { id: 'a-3' }, signal())).rejects.toMatchObject({
      failure: 'refused',
      message: 'an input image could not be read as an image',
    });
    expect(fake.imageEdits.length).toBe(before);
  });
});
