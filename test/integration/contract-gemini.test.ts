import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGeminiEngine } from '../../src/adapters/engines/gemini/gemini-engine.ts';
import { UpstreamError, type UpstreamRequest } from '../../src/adapters/engines/engine-contract.ts';
import { startGeminiFake } from '../support/gemini-fake.ts';

/*
 * The Gemini fake against its stored contracts (test/contracts/gemini/), without a database: a
 * documented request passes; the same request with one field misnamed is refused with Google's 400
 * INVALID_ARGUMENT naming that field. Then the engine's free check against the fake (key ok, a
 * wrong key, a model Google no longer serves) and a wrong key at submit.
 */
const KEY = 'AIza-contract-gemini-0b5e';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
let fake: Awaited<ReturnType<typeof startGeminiFake>>;

beforeAll(async () => {
  fake = await startGeminiFake({ key: KEY, video: Buffer.from('mp4'), png: PNG, pollsUntilDone: 0 });
});
afterAll(async () => {
  await fake?.close();
});

async function send(method: 'GET' | 'POST', path: string, body?: unknown, key: string | null = KEY) {
  const res = await request(`${fake.url}${path}`, {
    method,
    headers: { ...(key ? { 'x-goog-api-key': key } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.body.text();
  return { status: res.statusCode, location: res.headers.location, json: text ? (JSON.parse(text) as any) : undefined };
}

const image = { bytesBase64Encoded: PNG.toString('base64'), mimeType: 'image/png' };
const veo = { instances: [{ prompt: 'a shoe in the rain', image, lastFrame: image }], parameters: { aspectRatio: '16:9', durationSeconds: 8, resolution: '1080p', sampleCount: 1 } };
const picture = { contents: [{ parts: [{ text: 'two cups' }, { inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } }] }], generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '4:3', imageSize: '2K' } } };

function refusedNaming(r: { status: number; json: any }, text: string) {
  expect(r.status).toBe(400);
  expect(r.json.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  expect(r.json.error.message).toContain(text);
}

describe('Gemini fake, held to the contracts', () => {
  it('Veo: the documented request makes an operation; a misnamed parameter and a misnamed top-level field are refused, each named', async () => {
    const ok = await send('POST', '/models/veo-3.1-generate-preview:predictLongRunning', veo);
    expect(ok.status).toBe(200);
    expect(ok.json.name).toMatch(/^models\/veo-3\.1-generate-preview\/operations\/op\d+$/);
    refusedNaming(await send('POST', '/models/veo-3.1-generate-preview:predictLongRunning', { ...veo, parameters: { ...veo.parameters, durationSecond: 8 } }), '`durationSecond` isn\'t supported by this model.');
    const { instances, ...rest } = veo;
    refusedNaming(await send('POST', '/models/veo-3.1-generate-preview:predictLongRunning', { ...rest, instance: instances }), 'Invalid JSON payload received. Unknown name "instance": Cannot find field.');
  });

  it("Veo: the contract's limits hold (4k at 4 s, reference images on Fast, a reference image with a first frame)", async () => {
    refusedNaming(await send('POST', '/models/veo-3.1-generate-preview:predictLongRunning', { ...veo, parameters: { ...veo.parameters, resolution: '4k', durationSeconds: 4 } }), "'parameters.duration_seconds'");
    const reference = { instances: [{ prompt: 'x', referenceImages: [{ image, referenceType: 'asset' }] }], parameters: { aspectRatio: '16:9', durationSeconds: 8 } };
    expect((await send('POST', '/models/veo-3.1-generate-preview:predictLongRunning', reference)).status).toBe(200);
    refusedNaming(await send('POST', '/models/veo-3.1-fast-generate-preview:predictLongRunning', reference), 'instances[0].reference_images');
    refusedNaming(await send('POST', '/models/veo-3.1-generate-preview:predictLongRunning', { ...reference, instances: [{ ...reference.instances[0], image }] }), 'instances[0].image');
  });

  it('the operation, then the file URI: 302 to the bytes elsewhere; a misnamed query is refused', async () => {
    const { json: op } = await send('POST', '/models/veo-3.1-fast-generate-preview:predictLongRunning', { instances: [{ prompt: 'x' }] });
    const done = await send('GET', `/${op.name}`);
    expect(done.json.done).toBe(true);
    const uri = new URL(done.json.response.generateVideoResponse.generatedSamples[0].video.uri);
    const file = await send('GET', uri.pathname.replace('/v1beta', '') + uri.search);
    expect(file.status).toBe(302);
    expect(new URL(String(file.location)).origin).not.toBe(new URL(fake.url).origin);
    refusedNaming(await send('GET', uri.pathname.replace('/v1beta', '') + '?alt=media&altt=media'), 'Unknown name "altt"');
  });

  it('images: the documented request is answered with inline image data; a misnamed imageConfig field is refused as Google words it', async () => {
    const ok = await send('POST', '/models/gemini-3-pro-image:generateContent', picture);
    expect(ok.status).toBe(200);
    expect(ok.json.candidates[0].content.parts[0].inlineData.mimeType).toBe('image/png');
    const misnamed = { ...picture, generationConfig: { ...picture.generationConfig, imageConfig: { aspectRation: '4:3', imageSize: '2K' } } };
    refusedNaming(await send('POST', '/models/gemini-3-pro-image:generateContent', misnamed), `Invalid JSON payload received. Unknown name "aspectRation" at 'generation_config.image_config': Cannot find field.`);
    // Per model: Pro has no 4:1; Flash has.
    const wide = { ...picture, generationConfig: { ...picture.generationConfig, imageConfig: { aspectRatio: '4:1', imageSize: '1K' } } };
    refusedNaming(await send('POST', '/models/gemini-3-pro-image:generateContent', wide), "'generation_config.image_config.aspect_ratio'");
    expect((await send('POST', '/models/gemini-3.1-flash-image:generateContent', wide)).status).toBe(200);
  });

  it('keys and models as Google answers them: no key 403, a wrong key 400 API_KEY_INVALID, a retired model 404', async () => {
    expect((await send('GET', '/models?pageSize=1', undefined, null)).json.error.status).toBe('PERMISSION_DENIED');
    const wrong = await send('GET', '/models?pageSize=1', undefined, 'AIza-wrong');
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.details[0].reason).toBe('API_KEY_INVALID');
    const gone = await send('POST', '/models/gemini-3-pro-image-preview:generateContent', picture);
    expect(gone.status).toBe(404);
    expect(gone.json.error.status).toBe('NOT_FOUND');
    refusedNaming(await send('GET', '/models?page_size=1'), 'Unknown name "page_size"');
  });

  it('models.list pages', async () => {
    const first = await send('GET', '/models?pageSize=2');
    expect(first.json.models).toHaveLength(2);
    const second = await send('GET', `/models?pageSize=2&pageToken=${first.json.nextPageToken}`);
    expect(second.json.models[0].name).not.toBe(first.json.models[0].name);
  });
});

describe('the Gemini engine against the fake', () => {
  const engine = (apiKey: string, imageModels?: Record<string, string>) => createGeminiEngine({ apiUrl: fake.url, apiKey, allowPrivate: true, timeoutMs: 5_000, ...(imageModels ? { imageModels } : {}) });

  it('targets: the Gemini models a route key sends work to', () => {
    const e = engine(KEY, { pro: 'gemini-3-pro-image' });
    expect(e.targets!('veo-3.1')).toEqual(['veo-3.1-generate-preview']);
    expect(e.targets!('fast')).toEqual(['gemini-3.1-flash-image']);
    expect(e.targets!('ai-video')).toEqual(['veo-3.1-generate-preview', 'veo-3.1-fast-generate-preview']);
    expect(e.targets!('image-edit')).toEqual(['gemini-3.1-flash-image', 'gemini-3-pro-image']);
    expect(e.targets!('*')).toHaveLength(4);
    expect(e.targets!('gpt-2')).toEqual([]);
  });

  it('check: the key and each routed model are ok', async () => {
    const e = engine(KEY);
    expect(await e.check!(e.targets!('*'), AbortSignal.timeout(5_000))).toEqual([
      { target: 'key', outcome: 'ok', detail: 'the key lists the models' },
      { target: 'veo-3.1-generate-preview', outcome: 'ok', detail: 'Veo 3.1 (models/veo-3.1-generate-preview)' },
      { target: 'veo-3.1-fast-generate-preview', outcome: 'ok', detail: 'Veo 3.1 Fast (models/veo-3.1-fast-generate-preview)' },
      { target: 'gemini-3.1-flash-image', outcome: 'ok', detail: 'Nano Banana 2 (models/gemini-3.1-flash-image)' },
      { target: 'gemini-3-pro-image', outcome: 'ok', detail: 'Nano Banana Pro (models/gemini-3-pro-image)' },
    ]);
  });

  it("check: a wrong key is key_refused in Google's words", async () => {
    expect(await engine('AIza-wrong').check!(['veo-3.1-generate-preview'], AbortSignal.timeout(5_000))).toEqual([
      { target: 'key', outcome: 'key_refused', detail: 'INVALID_ARGUMENT: API key not valid. Please pass a valid API key.' },
    ]);
  });

  it("check: a model Google no longer serves (an operator's old override) is model_gone in Google's words", async () => {
    const e = engine(KEY, { fast: 'gemini-2.5-flash-image' });
    const [key, fast] = await e.check!(e.targets!('fast'), AbortSignal.timeout(5_000));
    expect(key!.outcome).toBe('ok');
    expect(fast).toEqual({
      target: 'gemini-2.5-flash-image',
      outcome: 'model_gone',
      detail: 'NOT_FOUND: models/gemini-2.5-flash-image is not found for API version v1beta, or is not supported for GetModel. Call ListModels to see the list of available models and their supported methods.',
    });
  });

  it("a wrong key at submit is the operator's auth failure, not the user's refused request (Google answers it 400)", async () => {
    const req: UpstreamRequest = {
      generationId: 'g-1',
      operation: 'text-to-image',
      params: { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 },
      inputs: { prompt: 'a cup', references: [], brandImages: [], productImages: [] },
    };
    const e = await engine('AIza-wrong').submit(req, { id: 'a-1' }, AbortSignal.timeout(5_000)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UpstreamError);
    expect((e as UpstreamError).failure).toBe('auth');
    const ok = await engine(KEY).submit(req, { id: 'a-2' }, AbortSignal.timeout(5_000));
    expect(ok.done).toMatchObject({ state: 'succeeded' });
  });
});

describe('Gemini fake: time, quotas and faults as Google gives them', () => {
  let timed: Awaited<ReturnType<typeof startGeminiFake>>;
  let clock = 0;
  beforeAll(async () => {
    timed = await startGeminiFake({ key: KEY, video: Buffer.from('mp4'), png: PNG, imageMs: 1_200, limits: { rpm: 2 }, now: () => clock });
  });
  afterAll(() => timed?.close());

  const generate = async (text: string, headers: Record<string, string> = {}) => {
    const res = await request(`${timed.url}/models/gemini-3.1-flash-image:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': KEY, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ ...picture, contents: [{ parts: [{ text }] }] }),
    });
    return { status: res.statusCode, headers: res.headers, json: (await res.body.json()) as any };
  };

  it('a call that outlasts the deadline it names is ended there with 504 DEADLINE_EXCEEDED and makes nothing; one within it makes its image', async () => {
    const started = Date.now();
    const late = await generate('too slow', { 'x-server-timeout': '1' });
    expect(Date.now() - started).toBeLessThan(1_200);
    expect(late.status).toBe(504);
    expect(late.json.error).toMatchObject({ code: 504, status: 'DEADLINE_EXCEEDED' });
    expect((await generate('in time', { 'x-server-timeout': '2' })).status).toBe(200);
    expect(timed.billedImages.map((b) => b.prompt)).toEqual(['in time']);
  });

  it('past the per-minute quota: 429 RESOURCE_EXHAUSTED with its RetryInfo and no Retry-After; a minute later it answers again', async () => {
    clock = 10_000_000;
    expect((await generate('first')).status).toBe(200);
    clock += 20_000;
    expect((await generate('second')).status).toBe(200);
    const third = await generate('third');
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBeUndefined();
    expect(third.json.error.status).toBe('RESOURCE_EXHAUSTED');
    expect(third.json.error.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '40s' });
    clock += 40_001;
    expect((await generate('fourth')).status).toBe(200);
    expect(timed.billedImages.map((b) => b.prompt)).not.toContain('third');
  });

  it('faults: an error in Google words (nothing made), a reset after the image was made (billed, no answer)', async () => {
    clock += 120_000;
    timed.failNext('generate-content', { status: 503 });
    const busy = await generate('busy');
    expect(busy.status).toBe(503);
    expect(busy.json.error).toEqual({ code: 503, status: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' });
    timed.failNext('generate-content', { reset: true });
    await expect(generate('cut')).rejects.toThrow();
    expect(timed.billedImages.map((b) => b.prompt)).toContain('cut');
    expect(timed.billedImages.map((b) => b.prompt)).not.toContain('busy');
  });
});
