import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { paddedPng, pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { wavBytes, wavSeconds } from '../support/wav.ts';
import { VOICES } from '../../src/domain/catalogue/voices.ts';

// Uploads on disk storage: raw and multipart bodies, sniffing, per-kind limits, `upload:<id>` in
// creates (team, expiry, kind checked before anything is charged), and the expiry job.

let svc: TestService;
let agent: Agent;
let a: Awaited<ReturnType<TestService['team']>>;
let b: Awaited<ReturnType<TestService['team']>>;
let png: Buffer;

beforeAll(async () => {
  svc = await startTestService({ MAX_INPUT_VIDEO_MB: '1' }, { worker: true });
  agent = new Agent({ connect: { ca: await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8') } });
  a = await svc.team({ name: 'A', credits: 1000 });
  b = await svc.team({ name: 'B', credits: 1000 });
  png = await pngBytes(96, 64, '#cc3366');
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
});

async function upload(key: string, body: Buffer | string, contentType?: string, headers: Record<string, string> = {}) {
  const res = await request(`${svc.baseUrl}/api/v1/uploads`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${key}`, ...(contentType ? { 'content-type': contentType } : {}), ...headers },
    body,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

function multipart(files: { name: string; bytes: Buffer; type: string }[]): { body: Buffer; type: string } {
  const boundary = 'adforge-test-boundary-7f3a';
  const parts = files.map((f) =>
    Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${f.name}"\r\nContent-Type: ${f.type}\r\n\r\n`),
      f.bytes,
      Buffer.from('\r\n'),
    ]),
  );
  return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

const uploadCount = async () => (await sql<{ n: number }>`select count(*)::int as n from uploads`.execute(svc.app.db)).rows[0]!.n;
const counts = async () =>
  (await sql<{ g: number; p: number; used: number }>`select (select count(*)::int from generations) as g, (select count(*)::int from products) as p,
     (select credits_used from teams where id = ${a.teamId}) as used`.execute(svc.app.db)).rows[0]!;

describe('POST /uploads', () => {
  it('stores a raw body by what its bytes are: a PNG labelled video/mp4 is an image/png upload of the team', async () => {
    const res = await upload(a.key, png, 'video/mp4');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ url: `upload:${res.body.id}`, content_type: 'image/png', size: png.length });
    expect(Object.keys(res.body).sort()).toEqual(['content_type', 'expires_at', 'id', 'size', 'url']);
    const hours = (Date.parse(res.body.expires_at) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    const row = await svc.app.db.selectFrom('uploads').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.team_id).toBe(a.teamId);
    expect(row.storage_key.startsWith(`uploads/${a.teamId}/`)).toBe(true);
    expect((await svc.app.storage.get(row.storage_key))!.bytes.equals(png)).toBe(true);
  });

  it('takes a raw body sent with no Content-Type at all', async () => {
    const res = await upload(a.key, png);
    expect(res.status).toBe(201);
    expect(res.body.content_type).toBe('image/png');
  });

  it('takes the one file of a multipart form, sniffed the same way', async () => {
    const form = multipart([{ name: 'red.png', bytes: png, type: 'application/pdf' }]);
    const res = await upload(a.key, form.body, form.type);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ content_type: 'image/png', size: png.length });
  });

  it('refuses a form with two files, or none, and stores nothing', async () => {
    const before = await uploadCount();
    const two = multipart([
      { name: 'a.png', bytes: png, type: 'image/png' },
      { name: 'b.png', bytes: png, type: 'image/png' },
    ]);
    const res = await upload(a.key, two.body, two.type);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.message).toMatch(/exactly one file/);
    expect(await uploadCount()).toBe(before);
  });

  it('refuses an HTML file labelled image/png, and an empty body', async () => {
    const before = await uploadCount();
    const html = await upload(a.key, '<!doctype html><html><body><script>alert(1)</script></body></html>', 'image/png');
    expect(html.status).toBe(400);
    expect(html.body.error).toMatchObject({ code: 'validation_error' });
    expect(html.body.error.message).toMatch(/not an image/);
    const empty = await upload(a.key, '', 'image/png');
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('validation_error');
    expect(await uploadCount()).toBe(before);
  });

  it('holds each kind to its size: images 10 MB (a 5 MB one passes the usual 1 MiB body limit), videos MAX_INPUT_VIDEO_MB', async () => {
    const five = await paddedPng(5 * 1024 * 1024);
    expect((await upload(a.key, five, 'image/png')).status).toBe(201);
    const before = await uploadCount();
    const big = await upload(a.key, await paddedPng(10 * 1024 * 1024 + 1), 'image/png');
    expect(big.status).toBe(400);
    expect(big.body.error.message).toMatch(/image upload takes at most 10 MB/);

    const video = await testVideo({ width: 64, height: 64, seconds: 1 });
    const ok = await upload(a.key, video, 'application/octet-stream');
    expect(ok.status).toBe(201);
    expect(ok.body.content_type).toBe('video/mp4');
    const padded = Buffer.concat([video, Buffer.alloc(1024 * 1024)]);
    const over = await upload(a.key, padded, 'video/mp4');
    expect(over.status).toBe(400);
    expect(over.body.error.message).toMatch(/video upload takes at most 1 MB/);
    expect(await uploadCount()).toBe(before + 1);
  });

  it('answers a body over the largest kind with its 400, not a reset', async () => {
    const res = await upload(a.key, Buffer.alloc(11 * 1024 * 1024, 1), 'image/png');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', message: 'the request body is too large' });
  });

  it('asks for a presigned upload only with S3 storage: on disk a clear 400', async () => {
    const res = await upload(a.key, JSON.stringify({ content_type: 'image/png', size: 1000 }), 'application/json');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.message).toMatch(/presigned uploads need S3 storage/);
  });

  it('honours Idempotency-Key: the same file again answers the first upload', async () => {
    const first = await upload(a.key, png, 'image/png', { 'idempotency-key': 'up-1' });
    const again = await upload(a.key, png, 'image/png', { 'idempotency-key': 'up-1' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
  });
});

describe('GET /uploads', () => {
  it("lists and reads the team's uploads; another team's is 404", async () => {
    const up = (await upload(a.key, png, 'image/png')).body;
    const one = await svc.api('GET', `/api/v1/uploads/${up.id}`, { key: a.key });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: up.id, status: 'ready', content_type: 'image/png' });
    const list = await svc.api('GET', '/api/v1/uploads?limit=100', { key: a.key });
    expect(list.body.data.map((u: { id: string }) => u.id)).toContain(up.id);
    expect((await svc.api('GET', `/api/v1/uploads/${up.id}`, { key: b.key })).status).toBe(404);
    expect((await svc.api('GET', '/api/v1/uploads?limit=100', { key: b.key })).body.data).toEqual([]);
  });
});

describe('upload:<id> in a request', () => {
  it('makes a product from an upload: the image is read from storage', async () => {
    const up = (await upload(a.key, png, 'image/png')).body;
    const res = await svc.api('POST', '/api/v1/products', { key: a.key, body: { name: 'Shoe', description: 'Red shoe', category: 'shoes', image_url: up.url } });
    expect(res.status).toBe(201);
    const stored = await svc.fetchUrl(res.body.image_path);
    expect(stored.bytes.equals(png)).toBe(true);
  });

  it("refuses another team's upload before anything is written or charged", async () => {
    const up = (await upload(a.key, png, 'image/png')).body;
    const before = await counts();
    const product = await svc.api('POST', '/api/v1/products', { key: b.key, body: { name: 'Shoe', description: 'Red shoe', category: 'shoes', image_url: up.url } });
    expect(product.status).toBe(404);
    expect(product.body.error.message).toMatch(/image_url: upload .* not found/);
    const image = await svc.api('POST', '/api/v1/images/edit', { key: b.key, body: { model: 'fast', quantity: 1, aspect_ratio: '1:1', resolution: '1k', prompt: 'a red shoe', reference_image_urls: [up.url] } });
    expect(image.status).toBe(404);
    expect(image.body.error.message).toMatch(/reference_image_urls\[0\]: upload .* not found/);
    expect(await counts()).toEqual(before);
  });

  it('refuses an expired upload, a missing one and one of the wrong kind: no row, no job, no charge', async () => {
    const up = (await upload(a.key, png, 'image/png')).body;
    await svc.app.db.updateTable('uploads').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', up.id).execute();
    const before = await counts();
    const jobs = async () => (await sql<{ n: number }>`select count(*)::int as n from graphile_worker.jobs`.execute(svc.app.db)).rows[0]!.n;
    const jobsBefore = await jobs();
    const expired = await svc.api('POST', '/api/v1/images/edit', { key: a.key, body: { model: 'fast', quantity: 1, aspect_ratio: '1:1', resolution: '1k', prompt: 'a shoe', reference_image_urls: [up.url] } });
    expect(expired.status).toBe(400);
    expect(expired.body.error.message).toMatch(/expired/);
    const missing = await svc.api('POST', '/api/v1/images/edit', { key: a.key, body: { model: 'fast', quantity: 1, aspect_ratio: '1:1', resolution: '1k', prompt: 'a shoe', reference_image_urls: ['upload:00000000-0000-4000-8000-000000000000'] } });
    expect(missing.status).toBe(404);
    const video = (await upload(a.key, await testVideo({ width: 64, height: 64, seconds: 1 }), 'video/mp4')).body;
    const wrong = await svc.api('POST', '/api/v1/images/edit', { key: a.key, body: { model: 'fast', quantity: 1, aspect_ratio: '1:1', resolution: '1k', prompt: 'a shoe', reference_image_urls: [video.url] } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toMatch(/is a video \(video\/mp4\); this field takes an image/);
    const quote = await svc.api('POST', '/api/v1/quotes/images/edit', { key: a.key, body: { model: 'fast', quantity: 1, aspect_ratio: '1:1', resolution: '1k', prompt: 'a shoe', reference_image_urls: [up.url] } });
    expect(quote.status).toBe(400);
    expect(await counts()).toEqual(before);
    expect(await jobs()).toBe(jobsBefore);
  });

  it('an image edit of an uploaded image completes', async () => {
    const up = (await upload(a.key, png, 'image/png')).body;
    const res = await svc.api('POST', '/api/v1/images/edit', { key: a.key, body: { model: 'fast', quantity: 1, aspect_ratio: '1:1', resolution: '1k', prompt: 'the shoe on a beach', reference_image_urls: [up.url] } });
    expect(res.status).toBe(202);
    const done = await waitForGeneration(svc, a.key, res.body.generation_id);
    expect(done.status).toBe('completed');
    expect(done.result_url).toBeTruthy();
  });

  it('is refused where the value is not a URL field and the reference is malformed', async () => {
    const res = await svc.api('POST', '/api/v1/images/edit', { key: a.key, body: { model: 'fast', quantity: 1, aspect_ratio: '1:1', resolution: '1k', prompt: 'x', reference_image_urls: ['upload:nope'] } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/reference_image_urls.*http\(s\) URL or an upload reference/);
  });

  it('is stated in the OpenAPI document on the URL fields', async () => {
    const doc = (await svc.api('GET', '/api/v1/openapi.json')).body;
    const product = doc.paths['/products'].post.requestBody.content['application/json'].schema;
    const schema = product.$ref ? doc.components.schemas[product.$ref.split('/').pop()] : product;
    expect(schema.properties.image_url.description).toMatch(/upload:<id>/);
    expect(schema.properties.image_url.pattern).toContain('upload:');
    expect(Object.keys(doc.paths['/uploads'].post.requestBody.content).sort()).toEqual(['application/json', 'application/octet-stream', 'multipart/form-data']);
  });
});

describe('expiry', () => {
  it('deletes uploads past their time and their files, and keeps one a brand shows', async () => {
    const unused = (await upload(a.key, png, 'image/png')).body;
    const shown = (await upload(a.key, png, 'image/png')).body;
    const fresh = (await upload(a.key, png, 'image/png')).body;
    await svc.app.services.brands.create(a.teamId, { name: 'Shoes Inc', logo_url: shown.url });
    await svc.app.db.updateTable('uploads').set({ expires_at: new Date(Date.now() - 1000) }).where('id', 'in', [unused.id, shown.id]).execute();
    const keyOf = async (id: string) => (await svc.app.db.selectFrom('uploads').select('storage_key').where('id', '=', id).executeTakeFirstOrThrow()).storage_key;
    const unusedKey = await keyOf(unused.id);
    expect(await svc.app.storage.get(unusedKey)).not.toBeNull();

    const deleted = await svc.app.jobs.uploads.deleteExpired();
    expect(deleted).toBeGreaterThanOrEqual(1);
    const left = (await svc.app.db.selectFrom('uploads').select('id').where('id', 'in', [unused.id, shown.id, fresh.id]).execute()).map((r) => r.id);
    expect(left.sort()).toEqual([shown.id, fresh.id].sort());
    expect(await svc.app.storage.get(unusedKey)).toBeNull();
    expect((await svc.api('GET', `/api/v1/uploads/${unused.id}`, { key: a.key })).status).toBe(404);
  });
});

describe('GraphQL', () => {
  it("reads the team's uploads, another team's as null; a presigned upload on disk storage is a validation_error", async () => {
    const gql = await graphqlClient(svc);
    try {
      const up = (await upload(a.key, png, 'image/png')).body;
      const q = `query($id: ID!) { upload(id: $id) { id url content_type size status } uploads(limit: 100) { items { id } totalCount } }`;
      const mine = await gql.gql(q, { id: up.id }, a.key);
      expect(mine.body.errors).toBeUndefined();
      expect(mine.body.data.upload).toEqual({ id: up.id, url: up.url, content_type: 'image/png', size: png.length, status: 'ready' });
      expect(mine.body.data.uploads.items.map((u: { id: string }) => u.id)).toContain(up.id);
      const theirs = await gql.gql(q, { id: up.id }, b.key);
      expect(theirs.body.data.upload).toBeNull();
      expect(theirs.body.data.uploads.totalCount).toBe(0);
      const presign = await gql.gql(
        `mutation { createPresignedUpload(contentType: "image/png", size: 100) { __typename ... on MutationCreatePresignedUploadSuccess { data { upload_url } } ... on AppError { code message } } }`,
        {},
        a.key,
      );
      expect(presign.body.data.createPresignedUpload).toMatchObject({ code: 'validation_error' });
    } finally {
      await gql.close();
    }
  });
});

describe('a service with MAX_INPUT_VIDEO_MB=30 and no worker', () => {
  let big: TestService;
  let bigAgent: Agent;
  let t: Awaited<ReturnType<TestService['team']>>;
  beforeAll(async () => {
    big = await startTestService({ MAX_INPUT_VIDEO_MB: '30' });
    bigAgent = new Agent({ connect: { ca: await fs.readFile(path.join(big.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8') } });
    t = await big.team({ credits: 100 });
  });
  afterAll(async () => {
    await bigAgent?.close();
    await big?.close();
  });
  const put = async (bytes: Buffer) => {
    const res = await request(`${big.baseUrl}/api/v1/uploads`, { method: 'POST', dispatcher: bigAgent, headers: { authorization: `Bearer ${t.key}` }, body: bytes });
    return JSON.parse(await res.body.text());
  };
  const voice = VOICES[0]!.id;

  it('takes an uploaded recording as audio_url', async () => {
    const up = await put(wavSeconds(2));
    expect(up.content_type).toBe('audio/wav');
    const res = await big.api('POST', '/api/v1/voiceovers/speech-to-speech', { key: t.key, body: { audio_url: up.url, voice_id: voice } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('holds an uploaded recording to the 25 MB a downloaded one is held to, charging nothing', async () => {
    const usedBefore = (await big.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
    const up = await put(wavBytes({ samples: 8000, padTo: 25 * 1024 * 1024 + 2 }));
    expect(up.size).toBe(25 * 1024 * 1024 + 2);
    const res = await big.api('POST', '/api/v1/voiceovers/speech-to-speech', { key: t.key, body: { audio_url: up.url, voice_id: voice } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^audio_url: .*larger than 25 MB/);
    const used = await big.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(used.credits_used).toBe(usedBefore);
  });

  it('keeps an expired upload while a processing generation names it, and deletes it once that one has ended', async () => {
    const up = await put(png);
    const res = await big.api('POST', '/api/v1/images/edit', { key: t.key, body: { model: 'fast', quantity: 1, aspect_ratio: '1:1', resolution: '1k', prompt: 'on a beach', reference_image_urls: [up.url] } });
    expect(res.status).toBe(202);
    await big.app.db.updateTable('uploads').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', up.id).execute();
    await big.app.jobs.uploads.deleteExpired();
    expect(await big.app.db.selectFrom('uploads').select('id').where('id', '=', up.id).executeTakeFirst()).toBeDefined();
    expect((await big.api('POST', `/api/v1/generations/${res.body.generation_id}/cancel`, { key: t.key, body: {} })).status).toBe(200);
    await big.app.jobs.uploads.deleteExpired();
    expect(await big.app.db.selectFrom('uploads').select('id').where('id', '=', up.id).executeTakeFirst()).toBeUndefined();
  });
});
