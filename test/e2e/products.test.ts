import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { paddedPng, pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';

const MB10 = 10 * 1024 * 1024;

let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
let a: Awaited<ReturnType<TestService['team']>>;
let b: Awaited<ReturnType<TestService['team']>>;
let png: Buffer;

beforeAll(async () => {
  svc = await startTestService();
  png = await pngBytes(120, 80, '#ff8800');
  host = await startImageHost({
    '/mug.png': sendBytes(png, 'image/png'),
    '/mug-no-type': sendBytes(png, 'application/octet-stream'),
    '/not-an-image.png': sendBytes(Buffer.from('just some text, honestly'), 'image/png'),
    '/missing.png': (_req, res) => res.writeHead(404).end(),
  });
  a = await svc.team({ name: 'A' });
  b = await svc.team({ name: 'B' });
});
afterAll(async () => {
  await host?.close();
  await svc?.close();
});

const mug = (over: Record<string, unknown> = {}) => ({
  name: 'Enamel mug',
  description: 'A blue enamel camping mug',
  category: 'kitchen',
  image_url: host.url('/mug.png'),
  ...over,
});

async function productCount(): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from products`.execute(svc.app.db);
  return r.rows[0]!.n;
}

describe('POST /products', () => {
  it('answers 201 with the product, the image under image_path, currency USD by default', async () => {
    const res = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug({ price: 12.5, link: 'https://shop.example/mug' }) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Enamel mug',
      description: 'A blue enamel camping mug',
      category: 'kitchen',
      price: 12.5,
      currency: 'USD',
      link: 'https://shop.example/mug',
    });
    expect(Object.keys(res.body).sort()).toEqual(
      ['category', 'created_at', 'currency', 'description', 'id', 'image_path', 'link', 'name', 'price'].sort(),
    );
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
  });

  it('stores its own copy of the image: the link serves the same bytes, not the source', async () => {
    const res = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug() });
    const copy = await svc.fetchUrl(res.body.image_path);
    expect(copy.status).toBe(200);
    expect(copy.headers['content-type']).toBe('image/png');
    expect(copy.bytes.equals(png)).toBe(true);
    expect(res.body.image_path.startsWith(svc.baseUrl + '/files/')).toBe(true);
    const meta = await sharp(copy.bytes).metadata();
    expect([meta.width, meta.height]).toEqual([120, 80]);
  });

  it('sniffs the bytes: an image served as octet-stream is accepted, text named .png is not', async () => {
    expect((await svc.api('POST', '/api/v1/products', { key: a.key, body: mug({ image_url: host.url('/mug-no-type') }) })).status).toBe(201);
    const before = await productCount();
    const res = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug({ image_url: host.url('/not-an-image.png') }) });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.message).toMatch(/^image_url: .*not an image/);
    expect(await productCount()).toBe(before);
  });

  it('accepts exactly 10 MB and refuses 10 MB + 1 byte, with and without Content-Length', async () => {
    host.routes['/10mb.png'] = sendBytes(await paddedPng(MB10), 'image/png');
    host.routes['/10mb-plus.png'] = sendBytes(await paddedPng(MB10 + 1), 'image/png');
    host.routes['/10mb-plus-chunked.png'] = sendBytes(await paddedPng(MB10 + 1), 'image/png', { contentLength: false });
    expect((await svc.api('POST', '/api/v1/products', { key: a.key, body: mug({ image_url: host.url('/10mb.png') }) })).status).toBe(201);
    const before = await productCount();
    for (const p of ['/10mb-plus.png', '/10mb-plus-chunked.png']) {
      const res = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug({ image_url: host.url(p) }) });
      expect(res.status, p).toBe(400);
      expect(res.body.error).toEqual({ code: 'validation_error', message: 'image_url: the file is larger than 10 MB' });
    }
    expect(await productCount()).toBe(before);
  });

  it('refuses an unreachable image with 400 naming image_url', async () => {
    const res = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug({ image_url: host.url('/missing.png') }) });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^image_url: .*404/);
  });

  it('validates every field, naming it, and fetches nothing for a bad body', async () => {
    const hitsBefore = host.hits.length;
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: undefined }, /^name: /],
      [{ name: '   ' }, /^name: must not be empty/],
      [{ description: 5 }, /^description: /],
      [{ category: undefined }, /^category: /],
      [{ image_url: 'ftp://example.com/a.png' }, /^image_url: /],
      [{ image_url: 'not a url' }, /^image_url: /],
      [{ price: -0.01 }, /^price: must not be negative/],
      [{ price: '12' }, /^price: /],
      [{ currency: 'XYZ' }, /^currency: must be an ISO 4217/],
      [{ currency: 'US' }, /^currency: /],
      [{ link: 'javascript:alert(1)' }, /^link: /],
    ];
    for (const [over, message] of bad) {
      const res = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug(over) });
      expect(res.status, JSON.stringify(over)).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.message).toMatch(message);
    }
    expect(host.hits.length).toBe(hitsBefore);
  });

  it('answers a repeated Idempotency-Key with the stored product, storing no second row and keeping no second file', async () => {
    const files = async () => (await fs.readdir(path.join(svc.dataDir, 'files', 'products'), { recursive: true })).length;
    const headers = { 'idempotency-key': 'mug-once' };
    const first = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug(), headers });
    expect(first.status).toBe(201);
    const [rows, stored] = [await productCount(), await files()];
    const again = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug(), headers });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect([await productCount(), await files()]).toEqual([rows, stored]);
  });

  it('normalises a lower-case ISO 4217 code and accepts price 0', async () => {
    const res = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug({ currency: 'eur', price: 0 }) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ currency: 'EUR', price: 0 });
  });

  it('refuses a non-object body, an empty body and a wrong content type with 400', async () => {
    for (const body of [[mug()], 'mug', 42, null]) {
      const res = await svc.api('POST', '/api/v1/products', { key: a.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
    const empty = await svc.api('POST', '/api/v1/products', { key: a.key, rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(empty.status).toBe(400);
    const form = await svc.api('POST', '/api/v1/products', { key: a.key, rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(400);
    expect(form.body.error).toEqual({ code: 'validation_error', message: 'Content-Type must be application/json' });
  });
});

describe('GET /products and GET /products/{id}', () => {
  it('lists only the team\'s products, newest first, with image_url', async () => {
    const team = await svc.team();
    const first = await svc.api('POST', '/api/v1/products', { key: team.key, body: mug({ name: 'first' }) });
    const second = await svc.api('POST', '/api/v1/products', { key: team.key, body: mug({ name: 'second' }) });
    const list = await svc.api('GET', '/api/v1/products', { key: team.key });
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual({ total: 2, limit: 20, offset: 0 });
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([second.body.id, first.body.id]);
    const item = list.body.data[0];
    expect(item.image_url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/files\//);
    expect(item).not.toHaveProperty('image_path');
    expect(item).not.toHaveProperty('team_id');
    const one = await svc.api('GET', `/api/v1/products/${first.body.id}`, { key: team.key });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: first.body.id, name: 'first', currency: 'USD', price: null, link: null });
    expect((await svc.fetchUrl(one.body.image_url)).bytes.equals(png)).toBe(true);
  });

  it('signs a fresh link on every read', async () => {
    const created = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug() });
    const r1 = await svc.api('GET', `/api/v1/products/${created.body.id}`, { key: a.key });
    await new Promise((r) => setTimeout(r, 1100));
    const r2 = await svc.api('GET', `/api/v1/products/${created.body.id}`, { key: a.key });
    expect(r1.body.image_url).not.toEqual(r2.body.image_url);
    const expires = Number(new URL(r2.body.image_url).searchParams.get('expires'));
    expect(expires - Date.now() / 1000).toBeGreaterThan(3590);
    expect(expires - Date.now() / 1000).toBeLessThanOrEqual(3600);
  });

  it('answers 400 for an id that is not a UUID and 404 for an unknown one', async () => {
    const bad = await svc.api('GET', '/api/v1/products/not-a-uuid', { key: a.key });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toEqual({ code: 'validation_error', message: 'id: must be a UUID' });
    const missing = await svc.api('GET', '/api/v1/products/00000000-0000-4000-8000-000000000000', { key: a.key });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });
});

describe('team scoping', () => {
  it("team B gets 404 on team A's product, for get and delete, and never sees it listed", async () => {
    const created = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug({ name: 'secret of A' }) });
    const id = created.body.id;
    const missing = await svc.api('GET', '/api/v1/products/00000000-0000-4000-8000-000000000000', { key: b.key });
    const get = await svc.api('GET', `/api/v1/products/${id}`, { key: b.key });
    expect(get.status).toBe(404);
    expect(get.body).toEqual(missing.body);
    const del = await svc.api('DELETE', `/api/v1/products/${id}`, { key: b.key });
    expect(del.status).toBe(404);
    expect(del.body).toEqual(missing.body);
    const list = await svc.api('GET', '/api/v1/products?limit=100', { key: b.key });
    expect(list.body.data.find((p: { id: string }) => p.id === id)).toBeUndefined();
    expect((await svc.api('GET', `/api/v1/products/${id}`, { key: a.key })).status).toBe(200);
  });
});

describe('DELETE /products/{id}', () => {
  it('answers 204, then 404; the stored image is gone', async () => {
    const created = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug() });
    const link = created.body.image_path;
    const del = await svc.api('DELETE', `/api/v1/products/${created.body.id}`, { key: a.key });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await svc.api('DELETE', `/api/v1/products/${created.body.id}`, { key: a.key })).status).toBe(404);
    expect((await svc.api('GET', `/api/v1/products/${created.body.id}`, { key: a.key })).status).toBe(404);
    expect((await svc.fetchUrl(link)).status).toBe(404);
  });

  it('answers 409 conflict while a row references the product (the hook generations use)', async () => {
    const created = await svc.api('POST', '/api/v1/products', { key: a.key, body: mug() });
    await sql`create table if not exists test_product_refs (product_id uuid not null references products (id) on delete restrict)`.execute(svc.app.db);
    await sql`insert into test_product_refs values (${created.body.id})`.execute(svc.app.db);
    const res = await svc.api('DELETE', `/api/v1/products/${created.body.id}`, { key: a.key });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect((await svc.api('GET', `/api/v1/products/${created.body.id}`, { key: a.key })).status).toBe(200);
  });
});
