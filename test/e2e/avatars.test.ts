import { sql } from 'kysely';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';

let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
let a: Awaited<ReturnType<TestService['team']>>;
let b: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  svc = await startTestService();
  host = await startImageHost({
    '/face.png': sendBytes(await pngBytes(256, 256, '#d2a679'), 'image/png'),
    '/face.txt': sendBytes(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/png'),
  });
  a = await svc.team();
  b = await svc.team();
});
afterAll(async () => {
  await host?.close();
  await svc?.close();
});

describe('GET /avatars (platform catalogue)', () => {
  it('lists at least 12 platform avatars, both genders and several age groups, as {data}', async () => {
    const res = await svc.api('GET', '/api/v1/avatars', { key: a.key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    const data = res.body.data as Array<Record<string, string>>;
    expect(data.length).toBeGreaterThanOrEqual(12);
    expect(new Set(data.map((x) => x.gender))).toEqual(new Set(['male', 'female']));
    expect(new Set(data.map((x) => x.age_group)).size).toBeGreaterThanOrEqual(3);
    for (const x of data) {
      expect(Object.keys(x).sort()).toEqual(['age_group', 'avatar_type', 'gender', 'id', 'name', 'thumbnail_url']);
      expect(x.avatar_type).toBe('platform');
      expect(x.id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('serves a real thumbnail image behind every thumbnail_url', async () => {
    const res = await svc.api('GET', '/api/v1/avatars', { key: a.key });
    const first = res.body.data[0];
    const img = await svc.fetchUrl(first.thumbnail_url);
    expect(img.status).toBe(200);
    expect(img.headers['content-type']).toBe('image/png');
    const meta = await sharp(img.bytes).metadata();
    expect(meta.format).toBe('png');
    expect(meta.width).toBe(512);
  });

  it('is the same for every team and holds no custom avatars', async () => {
    await svc.api('POST', '/api/v1/avatars/custom', { key: a.key, body: { name: 'Mine', image_url: host.url('/face.png') } });
    const ra = await svc.api('GET', '/api/v1/avatars', { key: a.key });
    const rb = await svc.api('GET', '/api/v1/avatars', { key: b.key });
    expect(ra.body.data.map((x: { id: string }) => x.id)).toEqual(rb.body.data.map((x: { id: string }) => x.id));
    expect(ra.body.data.some((x: { name: string }) => x.name === 'Mine')).toBe(false);
  });
});

describe('custom avatars', () => {
  it('POST answers 201 with id, name, thumbnail_url, avatar_type custom, description, created_at', async () => {
    const res = await svc.api('POST', '/api/v1/avatars/custom', {
      key: a.key,
      body: { name: 'Founder', image_url: host.url('/face.png'), description: 'our founder, smiling' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Founder', avatar_type: 'custom', description: 'our founder, smiling' });
    for (const k of ['id', 'name', 'thumbnail_url', 'avatar_type', 'description', 'created_at']) expect(res.body).toHaveProperty(k);
    const img = await svc.fetchUrl(res.body.thumbnail_url);
    expect(img.status).toBe(200);
    expect((await sharp(img.bytes).metadata()).width).toBe(256);
  });

  it('accepts a 50-character name and refuses 51 characters, creating nothing', async () => {
    const ok = await svc.api('POST', '/api/v1/avatars/custom', { key: a.key, body: { name: 'x'.repeat(50), image_url: host.url('/face.png') } });
    expect(ok.status).toBe(201);
    const before = await sql<{ n: number }>`select count(*)::int n from avatars`.execute(svc.app.db);
    const hits = host.hits.length;
    const res = await svc.api('POST', '/api/v1/avatars/custom', { key: a.key, body: { name: 'x'.repeat(51), image_url: host.url('/face.png') } });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'validation_error', message: 'name: must be at most 50 characters' });
    const after = await sql<{ n: number }>`select count(*)::int n from avatars`.execute(svc.app.db);
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
    expect(host.hits.length).toBe(hits);
  });

  it('checks the image like products do: an SVG/text body named .png is refused', async () => {
    const res = await svc.api('POST', '/api/v1/avatars/custom', { key: a.key, body: { name: 'Bad', image_url: host.url('/face.txt') } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^image_url: /);
  });

  it('GET /avatars/custom lists only the team\'s avatars as {data}', async () => {
    const t = await svc.team();
    const created = await svc.api('POST', '/api/v1/avatars/custom', { key: t.key, body: { name: 'Only mine', image_url: host.url('/face.png') } });
    const res = await svc.api('GET', '/api/v1/avatars/custom', { key: t.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [expect.objectContaining({ id: created.body.id, name: 'Only mine', avatar_type: 'custom' })] });
    const other = await svc.api('GET', '/api/v1/avatars/custom', { key: b.key });
    expect(other.body.data.find((x: { id: string }) => x.id === created.body.id)).toBeUndefined();
  });

  it("DELETE answers 204 for the team's avatar; team B gets 404 like a missing one", async () => {
    const created = await svc.api('POST', '/api/v1/avatars/custom', { key: a.key, body: { name: 'Temp', image_url: host.url('/face.png') } });
    const missing = await svc.api('DELETE', '/api/v1/avatars/custom/00000000-0000-4000-8000-000000000000', { key: b.key });
    expect(missing.status).toBe(404);
    const foreign = await svc.api('DELETE', `/api/v1/avatars/custom/${created.body.id}`, { key: b.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    const del = await svc.api('DELETE', `/api/v1/avatars/custom/${created.body.id}`, { key: a.key });
    expect(del.status).toBe(204);
    expect((await svc.api('DELETE', `/api/v1/avatars/custom/${created.body.id}`, { key: a.key })).status).toBe(404);
  });

  it('a platform avatar cannot be deleted through the custom route', async () => {
    const list = await svc.api('GET', '/api/v1/avatars', { key: a.key });
    const res = await svc.api('DELETE', `/api/v1/avatars/custom/${list.body.data[0].id}`, { key: a.key });
    expect(res.status).toBe(404);
  });

  it('answers 409 conflict while a row references the avatar (the hook video generations use)', async () => {
    const created = await svc.api('POST', '/api/v1/avatars/custom', { key: a.key, body: { name: 'In use', image_url: host.url('/face.png') } });
    await sql`create table if not exists test_avatar_refs (avatar_id uuid not null references avatars (id) on delete restrict)`.execute(svc.app.db);
    await sql`insert into test_avatar_refs values (${created.body.id})`.execute(svc.app.db);
    const res = await svc.api('DELETE', `/api/v1/avatars/custom/${created.body.id}`, { key: a.key });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
  });
});
