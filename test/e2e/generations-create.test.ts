import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { VOICES } from '../../src/domain/catalogue/voices.ts';

const VOICE_ID = VOICES[0]!.id;

// No worker: these tests are about what a create accepts, charges and records.
let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
let a: Awaited<ReturnType<TestService['team']>>;
let b: Awaited<ReturnType<TestService['team']>>;
let productId: string;
let customAvatarId: string;
let platformAvatarId: string;
const MISSING = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  svc = await startTestService();
  host = await startImageHost({ '/p.png': sendBytes(await pngBytes(), 'image/png') });
  a = await svc.team({ credits: 5000 });
  b = await svc.team({ credits: 5000 });
  productId = (await svc.api('POST', '/api/v1/products', { key: a.key, body: { name: 'Mug', description: 'd', category: 'c', image_url: host.url('/p.png') } })).body.id;
  customAvatarId = (await svc.api('POST', '/api/v1/avatars/custom', { key: a.key, body: { name: 'Me', image_url: host.url('/p.png') } })).body.id;
  platformAvatarId = (await svc.api('GET', '/api/v1/avatars', { key: a.key })).body.data[0].id;
});
afterAll(async () => {
  await host?.close();
  await svc?.close();
});

const post = (path: string, body: unknown, key = a.key) => svc.api('POST', `/api/v1${path}`, { key, body });
const used = async (teamId: string) =>
  (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow()).credits_used;
async function charged(fn: () => Promise<unknown>, teamId = a.teamId): Promise<number> {
  const before = await used(teamId);
  await fn();
  return (await used(teamId)) - before;
}

describe('POST /videos/talking-avatar', () => {
  const body = (over: Record<string, unknown> = {}) => ({ avatar_id: platformAvatarId, avatar_type: 'platform', script: 'x'.repeat(251), voice_id: VOICE_ID, ...over });

  it('answers 202 {generation_id, type, status} and charges 20 per started 250 characters', async () => {
    let res: any;
    expect(await charged(async () => (res = await post('/videos/talking-avatar', body())))).toBe(40);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ generation_id: expect.stringMatching(/^[0-9a-f-]{36}$/), type: 'talking-avatar', status: 'processing' });
    const one = await svc.api('GET', `/api/v1/generations/${res.body.generation_id}`, { key: a.key });
    expect(one.body.details).toMatchObject({ avatar_id: platformAvatarId, script: 'x'.repeat(251), voice_id: VOICE_ID, lipsync_model: 'heygen-avatar4' });
  });

  it('accepts custom and product avatars of the team; 404 for a missing or foreign avatar', async () => {
    expect((await post('/videos/talking-avatar', body({ avatar_id: customAvatarId, avatar_type: 'custom' }))).status).toBe(202);
    expect((await post('/videos/talking-avatar', body({ avatar_id: productId, avatar_type: 'product' }))).status).toBe(202);
    for (const [over, key] of [
      [{ avatar_id: MISSING }, a.key],
      [{ avatar_id: customAvatarId, avatar_type: 'custom' }, b.key],
      [{ avatar_id: productId, avatar_type: 'product' }, b.key],
      [{ avatar_id: customAvatarId, avatar_type: 'platform' }, a.key],
    ] as const) {
      const res = await post('/videos/talking-avatar', body(over), key);
      expect(res.status, JSON.stringify(over)).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('needs script + voice_id, or voiceover_id', async () => {
    const res = await post('/videos/talking-avatar', body({ voice_id: undefined }));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^voice_id: /);
    const vo = await post('/videos/talking-avatar', body({ voiceover_id: MISSING }));
    expect(vo.status).toBe(404);
  });

  it('answers 404 for a voice_id that is not in the voice catalogue, charging nothing', async () => {
    for (const voice_id of [MISSING, 'v1']) {
      let res: any;
      expect(await charged(async () => (res = await post('/videos/talking-avatar', body({ voice_id }))))).toBe(0);
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'not_found', message: 'Voice not found (voice_id)' });
    }
  });
});

describe('POST /videos/ai-video', () => {
  it('checks the model table and charges our per-second price', async () => {
    let res: any;
    expect(await charged(async () => (res = await post('/videos/ai-video', { model: 'kling-2.6', prompt: 'waves', aspect_ratio: '4:5', duration: 5 })))).toBe(15);
    expect(res.status).toBe(202);
    expect(res.body.type).toBe('ai-video');
    const bad = await post('/videos/ai-video', { model: 'kling-2.6', prompt: 'waves', aspect_ratio: '4:5', duration: 6 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^duration: /);
  });

  it('keeps only the team\'s own brand and products, silently, for the models that use them', async () => {
    const brand = await svc.app.services.brands.create(a.teamId, { name: 'B', logo_url: 'https://example.com/l.png' });
    const res = await post('/videos/ai-video', {
      model: 'seedance-2.0', prompt: 'p', aspect_ratio: '16:9', duration: 4, brand_id: brand.id, product_ids: [productId, MISSING],
    });
    expect(res.status).toBe(202);
    const one = await svc.api('GET', `/api/v1/generations/${res.body.generation_id}`, { key: a.key });
    expect(one.body.details.brand_id).toBe(brand.id);
    expect(one.body.details.product_ids).toEqual([productId]);
    const foreign = await post('/videos/ai-video', { model: 'seedance-2.0', prompt: 'p', aspect_ratio: '16:9', duration: 4, brand_id: brand.id }, b.key);
    expect(foreign.status).toBe(202);
    const other = await svc.api('GET', `/api/v1/generations/${foreign.body.generation_id}`, { key: b.key });
    expect(other.body.details.brand_id).toBeUndefined();
  });
});

describe('POST /videos/swap-avatar, /videos/localize, /videos/edit', () => {
  it('swap-avatar charges 1 or 2 per second; the avatar must be the team\'s', async () => {
    const base = { video_url: 'https://example.com/v.mp4', duration: 10, width: 720, height: 1280, image_url: 'https://example.com/f.png' };
    expect(await charged(() => post('/videos/swap-avatar', { ...base, mode: 'standard' }))).toBe(10);
    expect(await charged(() => post('/videos/swap-avatar', { ...base, mode: 'pro' }))).toBe(20);
    const res = await post('/videos/swap-avatar', { ...base, image_url: undefined, mode: 'pro', avatar_id: customAvatarId, avatar_type: 'custom' }, b.key);
    expect(res.status).toBe(404);
    const long = await post('/videos/swap-avatar', { ...base, mode: 'pro', duration: 31 });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(/^duration: /);
  });

  it('localize takes 1-120 s and speed|precision', async () => {
    const base = { video_url: 'https://example.com/v.mp4', output_language: 'es', width: 1280, height: 720 };
    const ok = await post('/videos/localize', { ...base, mode: 'speed', duration: 120 });
    expect(ok.status).toBe(202);
    expect(ok.body.type).toBe('localize');
    expect((await post('/videos/localize', { ...base, mode: 'speed', duration: 121 })).status).toBe(400);
    expect((await post('/videos/localize', { ...base, mode: 'fast', duration: 10 })).status).toBe(400);
  });

  it('video edit costs 2, answers type edit, and needs a real caption template', async () => {
    let res: any;
    expect(await charged(async () => (res = await post('/videos/edit', { template_id: 'bold-pop', video_url: 'https://example.com/v.mp4' })))).toBe(2);
    expect(res.body).toMatchObject({ type: 'edit', status: 'processing' });
    const missing = await post('/videos/edit', { template_id: 'no-such-template', video_url: 'https://example.com/v.mp4' });
    expect(missing.status).toBe(404);
  });

  it('video edit of a generation_id needs a completed ai-video of the same team', async () => {
    const vid = await post('/videos/ai-video', { model: 'kling-2.6', prompt: 'waves', aspect_ratio: '1:1', duration: 5 });
    const processing = await post('/videos/edit', { template_id: 'bold-pop', generation_id: vid.body.generation_id });
    expect(processing.status).toBe(400);
    expect(processing.body.error.message).toMatch(/^generation_id: /);
    await svc.app.db.updateTable('generations').set({ status: 'completed', completed_at: new Date(), result_keys: ['x/y.mp4'] }).where('id', '=', vid.body.generation_id).execute();
    expect((await post('/videos/edit', { template_id: 'bold-pop', generation_id: vid.body.generation_id })).status).toBe(202);
    expect((await post('/videos/edit', { template_id: 'bold-pop', generation_id: vid.body.generation_id }, b.key)).status).toBe(404);
    expect((await post('/videos/edit', { template_id: 'bold-pop', generation_id: MISSING })).status).toBe(404);
  });
});

describe('image endpoints', () => {
  it('text-to-image answers image-edit when the brand or products bring reference images', async () => {
    const plain = await post('/images/text-to-image', { model: 'fast', prompt: 'p', aspect_ratio: '1:1' });
    expect(plain.body.type).toBe('text-to-image');
    const withProduct = await post('/images/text-to-image', { model: 'fast', prompt: 'p', aspect_ratio: '1:1', product_ids: [productId] });
    expect(withProduct.body.type).toBe('image-edit');
    const brand = await svc.app.services.brands.create(a.teamId, { name: 'Ref', reference_image_url: 'https://example.com/r.png' });
    expect((await post('/images/text-to-image', { model: 'fast', prompt: 'p', aspect_ratio: '1:1', brand_id: brand.id })).body.type).toBe('image-edit');
    const noImages = await svc.app.services.brands.create(a.teamId, { name: 'Plain' });
    expect((await post('/images/text-to-image', { model: 'fast', prompt: 'p', aspect_ratio: '1:1', brand_id: noImages.id })).body.type).toBe('text-to-image');
    const foreign = await post('/images/text-to-image', { model: 'fast', prompt: 'p', aspect_ratio: '1:1', product_ids: [productId] }, b.key);
    expect(foreign.body.type).toBe('text-to-image');
  });

  it('charges the image table times quantity', async () => {
    expect(await charged(() => post('/images/text-to-image', { model: 'pro', prompt: 'p', aspect_ratio: '1:1', quantity: 4, resolution: '4k' }))).toBe(16);
    expect(await charged(() => post('/images/text-to-image', { model: 'gpt-2.5', effort: 'max', prompt: 'p', aspect_ratio: '1:1', quantity: 2, resolution: '4k' }))).toBe(20);
  });

  it('product-shots: 404 for a missing or foreign product, or a missing style', async () => {
    const ok = await post('/images/product-shots', { model: 'fast', aspect_ratio: '1:1', product_id: productId, style_id: 'marble-luxe' });
    expect(ok.status).toBe(202);
    expect(ok.body.type).toBe('product-shots');
    for (const [body, key] of [
      [{ product_id: MISSING, style_id: 'marble-luxe' }, a.key],
      [{ product_id: productId, style_id: 'marble-luxe' }, b.key],
      [{ product_id: productId, style_id: 'no-such-style' }, a.key],
    ] as const) {
      const res = await post('/images/product-shots', { model: 'fast', aspect_ratio: '1:1', ...body }, key);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('image edit: at most 5 reference images in all, the message naming each source', async () => {
    const brand = await svc.app.services.brands.create(a.teamId, { name: 'Both', logo_url: 'https://example.com/l.png', reference_image_url: 'https://example.com/r.png' });
    const urls = ['1', '2', '3'].map((n) => `https://example.com/${n}.png`);
    const before = await used(a.teamId);
    const res = await post('/images/edit', { model: 'fast', aspect_ratio: '1:1', prompt: 'p', reference_image_urls: urls, brand_id: brand.id, product_ids: [productId] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.message).toContain('3 from reference_image_urls');
    expect(res.body.error.message).toContain('2 from brand_id');
    expect(res.body.error.message).toContain('1 from product_ids');
    expect(await used(a.teamId)).toBe(before);
    const ok = await post('/images/edit', { model: 'fast', aspect_ratio: '1:1', prompt: 'p', reference_image_urls: urls.slice(0, 2), brand_id: brand.id, product_ids: [productId] });
    expect(ok.status).toBe(202);
    expect(ok.body.type).toBe('edit');
  });
});

describe('catalogues', () => {
  it('GET /styles and /caption-templates list at least 6 each, paginated', async () => {
    for (const path of ['/styles', '/caption-templates']) {
      const res = await svc.api('GET', `/api/v1${path}`, { key: a.key });
      expect(res.status).toBe(200);
      expect(res.body.pagination.total).toBeGreaterThanOrEqual(6);
      expect(res.body.data[0]).toHaveProperty('id');
      expect((await svc.api('GET', `/api/v1${path}?limit=2&offset=1`, { key: a.key })).body.data).toHaveLength(2);
      expect((await svc.api('GET', `/api/v1${path}?limit=0`, { key: a.key })).status).toBe(400);
    }
  });
});

describe('reading generations', () => {
  it('lists newest first; type=image matches every image kind; status filters; team-scoped', async () => {
    const t = await svc.team({ credits: 1000 });
    const made: string[] = [];
    for (const [path, body] of [
      ['/images/text-to-image', { model: 'fast', prompt: 'p', aspect_ratio: '1:1' }],
      ['/images/edit', { model: 'fast', prompt: 'p', aspect_ratio: '1:1', reference_image_urls: ['https://example.com/a.png'] }],
      ['/videos/ai-video', { model: 'kling-2.6', prompt: 'p', aspect_ratio: '1:1', duration: 5 }],
      ['/videos/edit', { template_id: 'karaoke', video_url: 'https://example.com/v.mp4' }],
    ] as const) {
      made.push((await post(path, body, t.key)).body.generation_id);
    }
    const all = await svc.api('GET', '/api/v1/generations', { key: t.key });
    expect(all.body.pagination.total).toBe(4);
    expect(all.body.data.map((g: { id: string }) => g.id)).toEqual([...made].reverse());
    expect(all.body.data[0]).toMatchObject({ status: 'processing', result_url: null });
    const images = await svc.api('GET', '/api/v1/generations?type=image', { key: t.key });
    expect(images.body.data.map((g: { id: string }) => g.id).sort()).toEqual([made[0], made[1]].sort());
    const videos = await svc.api('GET', '/api/v1/generations?type=ai-video&status=processing', { key: t.key });
    expect(videos.body.data.map((g: { id: string }) => g.id)).toEqual([made[2]]);
    expect((await svc.api('GET', '/api/v1/generations?status=completed', { key: t.key })).body.pagination.total).toBe(0);
    expect((await svc.api('GET', '/api/v1/generations?type=edit', { key: t.key })).status).toBe(400);
    expect((await svc.api('GET', `/api/v1/generations/${made[0]}`, { key: b.key })).status).toBe(404);
    const one = await svc.api('GET', `/api/v1/generations/${made[0]}`, { key: t.key });
    expect(one.body).toMatchObject({ id: made[0], generation_id: made[0], type: 'text-to-image', status: 'processing', result_url: null, completed_at: null });
  });
});

describe('resources in use', () => {
  it('a product used by a generation cannot be deleted (409); a custom avatar used by a video neither', async () => {
    const res = await post('/images/product-shots', { model: 'fast', aspect_ratio: '1:1', product_id: productId, style_id: 'studio-white' });
    expect(res.status).toBe(202);
    const del = await svc.api('DELETE', `/api/v1/products/${productId}`, { key: a.key });
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe('conflict');
    const avatarDel = await svc.api('DELETE', `/api/v1/avatars/custom/${customAvatarId}`, { key: a.key });
    expect(avatarDel.status).toBe(409);
    await sql`delete from generations where team_id = ${a.teamId}`.execute(svc.app.db);
    expect((await svc.api('DELETE', `/api/v1/avatars/custom/${customAvatarId}`, { key: a.key })).status).toBe(204);
  });
});
