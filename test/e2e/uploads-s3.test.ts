import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { paddedPng, pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startS3Server } from '../support/s3-server.ts';

// Uploads with STORAGE=s3 (s3rver): the raw body lands in the bucket, and the presigned form
// sends the bytes straight to the bucket, checked by the completion call.

let s3: Awaited<ReturnType<typeof startS3Server>>;
let svc: TestService;
let agent: Agent;
let team: Awaited<ReturnType<TestService['team']>>;
let png: Buffer;

beforeAll(async () => {
  s3 = await startS3Server('adforge-uploads');
  svc = await startTestService({
    ...s3.env,
  });
  agent = new Agent({ connect: { ca: await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8') } });
  team = await svc.team();
  png = await pngBytes(80, 80, '#3355ee');
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
  await s3?.close();
});

async function post(p: string, body: Buffer | string, contentType: string) {
  const res = await request(`${svc.baseUrl}/api/v1${p}`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${team.key}`, 'content-type': contentType }, body });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

const presign = (body: unknown) => post('/uploads', JSON.stringify(body), 'application/json');
const complete = (id: string) => svc.api('POST', `/api/v1/uploads/${id}/complete`, { key: team.key, body: {} });
const put = (url: string, bytes: Buffer, type: string) => fetch(url, { method: 'PUT', body: new Blob([new Uint8Array(bytes)]), headers: { 'content-type': type } });
const rowOf = (id: string) => svc.app.db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();

describe('uploads with S3 storage', () => {
  it('stores a raw upload in the bucket', async () => {
    const res = await post('/uploads', png, 'application/octet-stream');
    expect(res.status).toBe(201);
    const row = (await rowOf(res.body.id))!;
    expect((await svc.app.storage.get(row.storage_key))!.bytes.equals(png)).toBe(true);
  });

  it('refuses a raw upload sent without a length once past its limit, leaving no row and no object in the bucket', async () => {
    const rows = async () => (await svc.app.db.selectFrom('uploads').select('id').where('team_id', '=', team.teamId).execute()).length;
    const before = await rows();
    const big = await paddedPng(12 * 1024 * 1024);
    async function* pieces(): AsyncGenerator<Buffer> {
      for (let at = 0; at < big.length; at += 256 * 1024) yield big.subarray(at, at + 256 * 1024);
    }
    const res = await request(`${svc.baseUrl}/api/v1/uploads`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${team.key}`, 'content-type': 'application/octet-stream' },
      body: Readable.from(pieces(), { objectMode: false }),
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(await res.body.text()).error.message).toBe('file: an image upload takes at most 10 MB; this one is larger');
    expect(await rows()).toBe(before);
    const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    try {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: 'adforge-uploads', Prefix: `uploads/${team.teamId}/` }));
      const kept = new Set((await svc.app.db.selectFrom('uploads').select('storage_key').where('team_id', '=', team.teamId).execute()).map((r) => r.storage_key));
      expect((listed.Contents ?? []).map((o) => o.Key).filter((k) => !kept.has(k!))).toEqual([]);
    } finally {
      client.destroy();
    }
  });

  it('presigns a PUT, takes the bytes from the bucket on completion, and the upload makes a product', async () => {
    const res = await presign({ content_type: 'image/png', size: png.length });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'pending', upload_method: 'PUT', url: `upload:${res.body.id}`, content_type: 'image/png', size: png.length });
    expect(new URL(res.body.upload_url).origin).toBe(s3.endpoint);

    // Not usable before it is complete.
    const early = await svc.api('POST', '/api/v1/products', { key: team.key, body: { name: 'Cup', description: 'A cup', category: 'kitchen', image_url: res.body.url } });
    expect(early.status).toBe(400);
    expect(early.body.error.message).toMatch(/not complete/);
    const notYet = await complete(res.body.id);
    expect(notYet.status).toBe(400);
    expect(notYet.body.error.message).toMatch(/nothing has been uploaded/);

    const sent = await put(res.body.upload_url, png, 'image/png');
    expect(sent.status).toBe(200);
    const done = await complete(res.body.id);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ id: res.body.id, content_type: 'image/png', size: png.length });
    expect((await complete(res.body.id)).body).toEqual(done.body);

    const product = await svc.api('POST', '/api/v1/products', { key: team.key, body: { name: 'Cup', description: 'A cup', category: 'kitchen', image_url: res.body.url } });
    expect(product.status).toBe(201);
    expect(Buffer.from(await (await fetch(product.body.image_path)).arrayBuffer()).equals(png)).toBe(true);
  });

  it('refuses and deletes an upload whose bytes are not what an input can be', async () => {
    const html = Buffer.from('<!doctype html><html><body>not an image at all, but the right size</body></html>');
    const res = await presign({ content_type: 'image/png', size: html.length });
    expect(res.status).toBe(201);
    expect((await put(res.body.upload_url, html, 'image/png')).status).toBe(200);
    const row = (await rowOf(res.body.id))!;
    const done = await complete(res.body.id);
    expect(done.status).toBe(400);
    expect(done.body.error.message).toMatch(/not an image/);
    expect(await rowOf(res.body.id)).toBeUndefined();
    expect(await svc.app.storage.get(row.storage_key)).toBeNull();
  });

  it('refuses and deletes an upload of another size than declared (the link signs the length; s3rver does not check it, the completion does)', async () => {
    const res = await presign({ content_type: 'image/png', size: png.length + 10 });
    expect(new URL(res.body.upload_url).searchParams.get('X-Amz-SignedHeaders')).toMatch(/content-length/);
    expect((await put(res.body.upload_url, png, 'image/png')).status).toBe(200);
    const done = await complete(res.body.id);
    expect(done.status).toBe(400);
    expect(done.body.error.message).toMatch(new RegExp(`${png.length} bytes were uploaded but ${png.length + 10} were declared`));
    expect(await rowOf(res.body.id)).toBeUndefined();
  });

  it('refuses and deletes bytes of another kind than declared (a video PUT as image/png)', async () => {
    const video = await testVideo({ width: 64, height: 64, seconds: 1 });
    const res = await presign({ content_type: 'image/png', size: video.length });
    expect((await put(res.body.upload_url, video, 'image/png')).status).toBe(200);
    const row = (await rowOf(res.body.id))!;
    const done = await complete(res.body.id);
    expect(done.status).toBe(400);
    expect(done.body.error.message).toMatch(/the bytes are a video \(video\/mp4\) but an image was declared/);
    expect(await rowOf(res.body.id)).toBeUndefined();
    expect(await svc.app.storage.get(row.storage_key)).toBeNull();
  });

  it('refuses a declared type no input takes, and a size over its kind', async () => {
    const html = await presign({ content_type: 'text/html', size: 100 });
    expect(html.status).toBe(400);
    expect(html.body.error.message).toMatch(/^content_type: /);
    const big = await presign({ content_type: 'image/png', size: 11 * 1024 * 1024 });
    expect(big.status).toBe(400);
    expect(big.body.error.message).toMatch(/at most 10 MB/);
  });
});

describe('presigned uploads over GraphQL', () => {
  it('createPresignedUpload answers a PUT link; completeUpload checks the bytes and answers the ready upload', async () => {
    const gql = await graphqlClient(svc);
    try {
      const made = await gql.gql(
        `mutation($size: Int!) { createPresignedUpload(contentType: "image/png", size: $size) { ... on MutationCreatePresignedUploadSuccess { data { upload_url upload_method upload { id url status } } } ... on AppError { code message } } }`,
        { size: png.length },
        team.key,
      );
      const data = made.body.data.createPresignedUpload.data;
      expect(data.upload.status).toBe('pending');
      expect(data.upload_method).toBe('PUT');
      expect((await put(data.upload_url, png, 'image/png')).status).toBe(200);
      const done = await gql.gql(
        `mutation($id: ID!) { completeUpload(id: $id) { ... on MutationCompleteUploadSuccess { data { id url content_type size status } } ... on AppError { code message } } }`,
        { id: data.upload.id },
        team.key,
      );
      expect(done.body.data.completeUpload.data).toEqual({ id: data.upload.id, url: data.upload.url, content_type: 'image/png', size: png.length, status: 'ready' });
    } finally {
      await gql.close();
    }
  });
});
