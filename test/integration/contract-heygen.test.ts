import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHeyGenFake } from '../support/heygen-fake.ts';
import { wavSeconds } from '../support/wav.ts';

/*
 * The HeyGen fake holds every request to test/contracts/heygen/: a valid request passes; the same
 * request with one field misnamed, mistyped or missing is refused as HeyGen refuses it, 400
 * {error: {code: "invalid_parameter", message, param}} naming the field; a refused key is 401
 * authentication_failed. Requests are sent directly, no service around them.
 */
const KEY = 'hg-contract-key';
let fake: Awaited<ReturnType<typeof startHeyGenFake>>;
let png: Buffer;

beforeAll(async () => {
  fake = await startHeyGenFake({ key: KEY, video: Buffer.from('not used') });
  png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } }).png().toBuffer();
});
afterAll(() => fake?.close());

async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const form = body instanceof FormData;
  const res = await fetch(`${fake.url}${path}`, {
    method,
    headers: { 'x-api-key': KEY, ...(body !== undefined && !form ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: form ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const upload = async (bytes: Buffer, type: string, field = 'file') => {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(bytes)], { type }), 'f');
  return send('POST', '/v3/assets', form);
};

/** The same request, one field renamed (at a dotted path). */
function renamed(body: Record<string, any>, path: string, to: string): Record<string, any> {
  const copy = structuredClone(body);
  const keys = path.split('.');
  const last = keys.pop()!;
  const parent = keys.reduce((o, k) => o[k], copy);
  parent[to] = parent[last];
  delete parent[last];
  return copy;
}

function expectRefused(r: { status: number; body: any }, field: string) {
  expect(r.status).toBe(400);
  expect(r.body.error).toMatchObject({ code: 'invalid_parameter', param: field });
  expect(r.body.error.message).toContain(field);
}

describe('POST /v3/assets (multipart)', () => {
  it('a file part passes; a part named otherwise is refused, naming it and the file it misses', async () => {
    expect((await upload(png, 'image/png')).status).toBe(200);
    const r = await upload(png, 'image/png', 'upload');
    expectRefused(r, 'upload');
    expect(r.body.error.message).toContain('file is required');
  });
  it('the type HeyGen detects from the bytes decides, not the declared one: WebP is refused', async () => {
    const webp = await sharp(png).webp().toBuffer();
    const r = await upload(webp, 'image/png');
    expectRefused(r, 'file.type');
  });
});

describe('POST /v3/videos (type image)', () => {
  let body: Record<string, any>;
  beforeAll(async () => {
    const image = (await upload(png, 'image/png')).body.data.asset_id;
    const audio = (await upload(wavSeconds(0.2), 'audio/wav')).body.data.asset_id;
    body = { type: 'image', image: { type: 'asset_id', asset_id: image }, audio_asset_id: audio, aspect_ratio: '9:16', resolution: '720p', title: 't' };
  });

  it('the request adforge sends passes, under an Idempotency-Key', async () => {
    const r = await send('POST', '/v3/videos', body, { 'idempotency-key': `${crypto.randomUUID()}:x` });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ video_id: expect.any(String), status: 'waiting' });
  });
  it('one field misnamed is refused, naming it', async () => {
    expectRefused(await send('POST', '/v3/videos', renamed(body, 'audio_asset_id', 'audio_id')), 'audio_id');
    expectRefused(await send('POST', '/v3/videos', renamed(body, 'image.asset_id', 'id')), 'image.id');
  });
  it('a value outside an enum, a wrong type, a malformed Idempotency-Key', async () => {
    expectRefused(await send('POST', '/v3/videos', { ...body, aspect_ratio: '3:4' }), 'aspect_ratio');
    expectRefused(await send('POST', '/v3/videos', { ...body, resolution: 720 }), 'resolution');
    const r = await send('POST', '/v3/videos', body, { 'idempotency-key': 'has spaces' });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_parameter', param: 'idempotency-key' });
  });
  it('a refused key is 401 authentication_failed', async () => {
    const r = await send('POST', '/v3/videos', body, { 'x-api-key': 'wrong' });
    expect(r.status).toBe(401);
    expect(r.body.error).toMatchObject({ code: 'authentication_failed' });
  });
});

describe('POST /v3/video-translations', () => {
  const body = { video: { type: 'url', url: 'https://example.com/clip.mp4' }, output_languages: ['French (France)'], mode: 'precision', speaker_num: 2, translate_audio_only: false, enable_dynamic_duration: true, title: 't' };
  it('passes as adforge sends it; output_language (singular) is refused, naming it', async () => {
    expect((await send('POST', '/v3/video-translations', body)).status).toBe(200);
    expectRefused(await send('POST', '/v3/video-translations', renamed(body, 'output_languages', 'output_language')), 'output_language');
  });
  it('a mode outside speed | precision, a speaker_num as text, an empty language list', async () => {
    expectRefused(await send('POST', '/v3/video-translations', { ...body, mode: 'fast' }), 'mode');
    expectRefused(await send('POST', '/v3/video-translations', { ...body, speaker_num: '2' }), 'speaker_num');
    expectRefused(await send('POST', '/v3/video-translations', { ...body, output_languages: [] }), 'output_languages');
  });
  it('a name HeyGen does not list is refused as HeyGen refuses it', async () => {
    const r = await send('POST', '/v3/video-translations', { ...body, output_languages: ['Chinese (Mandarin, Traditional)'] });
    expect(r).toEqual({ status: 400, body: { error: expect.objectContaining({ code: 'invalid_parameter', param: 'output_languages', message: expect.stringContaining('not supported') }) } });
  });
});

describe('POST /v1/workflows/executions (FaceswapNode)', () => {
  const body = { workflow_type: 'FaceswapNode', input: { source_image_url: 'https://example.com/f.png', target_video_url: 'https://example.com/v.mp4' } };
  it('passes as adforge sends it; input.source_image (misnamed) is refused, naming it', async () => {
    const ok = await send('POST', '/v1/workflows/executions', body);
    expect(ok.body.data).toMatchObject({ execution_id: expect.any(String), status: 'submitted' });
    expectRefused(await send('POST', '/v1/workflows/executions', renamed(body, 'input.source_image_url', 'source_image')), 'input.source_image');
    expectRefused(await send('POST', '/v1/workflows/executions', { ...body, workflow_type: 'FaceSwap' }), 'workflow_type');
  });
});

describe('the reads', () => {
  it('an unknown video is 404 not_found; an unknown execution answers status not_found; languages and the account read', async () => {
    expect(await send('GET', '/v3/videos/nope')).toEqual({ status: 404, body: { error: expect.objectContaining({ code: 'not_found' }) } });
    expect((await send('GET', '/v1/workflows/executions/nope')).body.data.status).toBe('not_found');
    expect((await send('GET', '/v3/video-translations/languages')).body.data.languages).toContain('Chinese (Taiwanese Mandarin, Traditional)');
    expect((await send('GET', '/v3/users/me')).body.data).toMatchObject({ username: 'adforge-test' });
    expect((await send('GET', '/v3/users/me', undefined, { 'x-api-key': 'wrong' })).status).toBe(401);
  });
});

describe('GET /v3/videos/statuses (up to 100 videos by id)', () => {
  it('names each video asked for in its own words; an unknown id not_found; a missing or over-long id list refused', async () => {
    const ok = await send('GET', `/v3/videos/statuses?video_ids=nope,also-nope`);
    expect(ok).toEqual({ status: 200, body: { data: [{ video_id: 'nope', status: 'not_found' }, { video_id: 'also-nope', status: 'not_found' }], has_more: false, next_token: null } });
    expect((await send('GET', '/v3/videos/statuses')).status).toBe(400);
    const many = Array.from({ length: 101 }, (_, i) => `v${i}`).join(',');
    expectRefused(await send('GET', `/v3/videos/statuses?video_ids=${many}`), 'video_ids');
    expectRefused(await send('GET', `/v3/videos/statuses?video_ids=a&status=completed`), 'status');
  });
});

describe('creates under load, as HeyGen answers them', () => {
  const translation = { video: { type: 'url', url: 'https://example.com/clip.mp4' }, output_languages: ['French (France)'], mode: 'speed', title: 't' };

  it('a repeat under the same Idempotency-Key while the first is in flight is 409 request_in_progress and makes nothing; after it, the first answer is replayed', async () => {
    fake.delaySubmits(300);
    try {
      const key = `${crypto.randomUUID()}:inflight`;
      const before = fake.translationCreates.length;
      const first = send('POST', '/v3/video-translations', translation, { 'idempotency-key': key });
      await new Promise((r) => setTimeout(r, 100));
      const second = await send('POST', '/v3/video-translations', translation, { 'idempotency-key': key });
      expect(second).toEqual({ status: 409, body: { error: expect.objectContaining({ code: 'request_in_progress' }) } });
      const answered = await first;
      expect(answered.status).toBe(200);
      expect(await send('POST', '/v3/video-translations', translation, { 'idempotency-key': key })).toEqual(answered);
      expect(fake.translationCreates.length - before).toBe(1);
    } finally {
      fake.delaySubmits(0);
    }
  });

  it('a create past the plan’s concurrent jobs is 429 rate_limit_exceeded with Retry-After', async () => {
    const busy = await startHeyGenFake({ key: KEY, video: Buffer.from('not used'), concurrentJobs: 1, pollsUntilDone: 5 });
    try {
      const ask = () => fetch(`${busy.url}/v3/video-translations`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(translation) });
      expect((await ask()).status).toBe(200);
      const refused = await ask();
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await refused.json()) as any).error.code).toBe('rate_limit_exceeded');
      expect(busy.translationCreates).toHaveLength(1);
    } finally {
      await busy.close();
    }
  });
});
