import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFalCheck, falTargets } from '../../src/adapters/engines/fal/fal-check.ts';
import { createSafeDispatcher } from '../../src/adapters/net/safe-dispatcher.ts';
import { startFalFake } from '../support/fal-fake.ts';

/*
 * The fal fake holds every request to its stored contract (test/contracts/fal/): a valid request
 * passes; the same request with one field misnamed is refused as fal refuses it (422,
 * `{detail: [{loc, msg, type, url}]}` naming the field). And the free operator check, against it.
 */
const KEY = 'fal-contract-key:7c1e';
let fake: Awaited<ReturnType<typeof startFalFake>>;

beforeAll(async () => {
  fake = await startFalFake({ key: KEY, video: Buffer.from('mp4'), pollsUntilDone: 0 });
});
afterAll(() => fake?.close());

const send = async (method: string, path: string, body?: unknown, key: string | null = KEY) => {
  const headers: Record<string, string> = key ? { authorization: `Key ${key}` } : {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${fake.url}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { detail?: Array<{ loc: unknown[]; type: string; msg: string }> | string } };
};
/** fal's 422 naming one field of the body. */
const names = (r: Awaited<ReturnType<typeof send>>, loc: unknown[], type: string) => {
  expect(r.status).toBe(422);
  expect(r.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc, type, url: `https://docs.fal.ai/errors/#${type}` })]));
};

describe('the fal fake holds requests to the stored contracts', () => {
  it('Kling 2.6 Pro image-to-video: start_image_url passes; image_url in its place is refused naming both', async () => {
    const valid = { prompt: 'a king walks', start_image_url: 'https://example.com/k.png', duration: '5', generate_audio: true };
    const ok = await send('POST', '/fal-ai/kling-video/v2.6/pro/image-to-video', valid);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'IN_QUEUE', queue_position: 0 });
    const { start_image_url, ...rest } = valid;
    const wrong = await send('POST', '/fal-ai/kling-video/v2.6/pro/image-to-video', { ...rest, image_url: start_image_url });
    names(wrong, ['body', 'start_image_url'], 'missing');
    names(wrong, ['body', 'image_url'], 'extra_forbidden');
  });

  it('Veo 3.1: a valid submit passes; `durations` for `duration` is refused naming it; a value outside the enum too', async () => {
    const valid = { prompt: 'a lighthouse', aspect_ratio: '16:9', duration: '8s', resolution: '1080p', generate_audio: true };
    expect((await send('POST', '/fal-ai/veo3.1?fal_webhook=https%3A%2F%2Fexample.com%2Fhook', valid)).status).toBe(200);
    const { duration, ...rest } = valid;
    names(await send('POST', '/fal-ai/veo3.1', { ...rest, durations: duration }), ['body', 'durations'], 'extra_forbidden');
    names(await send('POST', '/fal-ai/veo3.1', { ...valid, aspect_ratio: '1:1' }), ['body', 'aspect_ratio'], 'literal_error');
    names(await send('POST', '/fal-ai/veo3.1?fal_hook=https%3A%2F%2Fexample.com', valid), ['query', 'fal_hook'], 'extra_forbidden');
  });

  it('Seedance 2.0 reference-to-video: up to 9 images pass; a 10th is refused; Sora 2 takes its duration as a number', async () => {
    const images = Array.from({ length: 9 }, (_, i) => `https://example.com/${i}.png`);
    expect((await send('POST', '/bytedance/seedance-2.0/reference-to-video', { prompt: 'p', image_urls: images, duration: '5' })).status).toBe(200);
    names(await send('POST', '/bytedance/seedance-2.0/reference-to-video', { prompt: 'p', image_urls: [...images, 'https://example.com/9.png'] }), ['body', 'image_urls'], 'value_error');
    expect((await send('POST', '/fal-ai/sora-2/text-to-video', { prompt: 'p', duration: 8 })).status).toBe(200);
    names(await send('POST', '/fal-ai/sora-2/text-to-video', { prompt: 'p', duration: '8' }), ['body', 'duration'], 'type_error');
  });

  it('status, result and cancel: valid reads pass (202 while queued, 200 complete); a misnamed query is refused naming it; a wrong key is 401', async () => {
    const { body } = await send('POST', '/bytedance/seedance-2.0/text-to-video', { prompt: 'read me', duration: '4' });
    const root = `/bytedance/seedance-2.0/requests/${String(body.request_id)}`;
    expect(await send('GET', `${root}/status?logs=0`)).toMatchObject({ status: 200, body: { status: 'COMPLETED', logs: null } });
    expect((await send('GET', root)).body).toMatchObject({ seed: 42, video: { url: expect.stringContaining('/files/') } });
    names(await send('GET', `${root}/status?log=0`), ['query', 'log'], 'extra_forbidden');
    expect(await send('GET', `${root}/status`, undefined, 'wrong')).toEqual({ status: 401, body: { detail: 'Invalid authentication' } });
    expect(await send('PUT', `${root}/cancel`)).toEqual({ status: 202, body: { status: 'CANCELLATION_REQUESTED' } });
    expect(fake.invalid.map((i) => i.call)).toContain('GET /{owner}/{app}/requests/{request_id}/status');
  });

  it('the model search (no key): endpoint ids listed; a misnamed parameter is refused naming it', async () => {
    const found = await send('GET', '/v1/models?endpoint_id=fal-ai/veo3.1&endpoint_id=acme/nothing', undefined, null);
    expect(found.body).toEqual({ models: [expect.objectContaining({ endpoint_id: 'fal-ai/veo3.1', metadata: expect.objectContaining({ status: 'active' }) })], next_cursor: null, has_more: false });
    const wrong = await send('GET', '/v1/models?endpoint_ids=fal-ai/veo3.1', undefined, null);
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toContain('endpoint_ids');
  });
});

describe('the free operator check against the fake', () => {
  const check = (key: string, queueUrl = fake.url) =>
    createFalCheck({ queueUrl, apiUrl: `${fake.url}/v1`, apiKey: key, dispatcher: createSafeDispatcher({ allowPrivate: true, connectTimeoutMs: 2_000 }) });

  it('targets: a model its endpoints (kling-o3 every tier), ai-video and * every endpoint; FAL_MODEL_ENDPOINTS overrides', () => {
    expect(falTargets('kling-2.6', {})).toEqual(['fal-ai/kling-video/v2.6/pro/text-to-video', 'fal-ai/kling-video/v2.6/pro/image-to-video']);
    expect(falTargets('kling-o3', {})).toHaveLength(9);
    expect(falTargets('ai-video', {})).toHaveLength(27);
    expect(falTargets('*', {})).toEqual(falTargets('ai-video', {}));
    expect(falTargets('veo-3.1', { 'veo-3.1': 'acme/veo' })).toEqual(['acme/veo', 'fal-ai/veo3.1/image-to-video', 'fal-ai/veo3.1/first-last-frame-to-video']);
    expect(falTargets('text-to-image', {})).toEqual([]);
  });

  it('ok: the key by a status read of a request that does not exist, each endpoint by the model search', async () => {
    const targets = falTargets('ai-video', {});
    const results = await check(KEY)(targets, AbortSignal.timeout(10_000));
    expect(results[0]).toMatchObject({ target: 'key', outcome: 'ok' });
    expect(results[0]!.detail).toMatch(/answered 404: Request not found/);
    expect(results.slice(1).map((r) => r.target)).toEqual(targets);
    expect(results.slice(1).filter((r) => !r.target.startsWith('fal-ai/sora-2')).every((r) => r.outcome === 'ok')).toBe(true);
    // The model search lists Sora as deprecated (the fake, as fal did before dropping it): still runs, reported deprecated.
    expect(results.find((r) => r.target === 'fal-ai/sora-2/text-to-video')).toMatchObject({ outcome: 'deprecated', detail: expect.stringMatching(/deprecated/) });
    expect(fake.modelSearches.at(-1)).toEqual(targets);
  });

  it("a wrong key is key_refused in fal's words; an endpoint fal no longer lists is model_gone", async () => {
    fake.unlist('fal-ai/kling-video/v2.6/pro/image-to-video');
    const results = await check('not-the-key')(falTargets('kling-2.6', {}), AbortSignal.timeout(10_000));
    expect(results).toEqual([
      { target: 'key', outcome: 'key_refused', detail: 'Invalid authentication' },
      { target: 'fal-ai/kling-video/v2.6/pro/text-to-video', outcome: 'ok', detail: 'listed (active)' },
      { target: 'fal-ai/kling-video/v2.6/pro/image-to-video', outcome: 'model_gone', detail: "fal's model search does not list fal-ai/kling-video/v2.6/pro/image-to-video" },
    ]);
  });

  it('a queue that cannot be reached is unreachable', async () => {
    const [key] = await check(KEY, 'http://127.0.0.1:9')(['fal-ai/veo3.1'], AbortSignal.timeout(10_000));
    expect(key).toMatchObject({ target: 'key', outcome: 'unreachable' });
  });
});
