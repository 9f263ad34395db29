import sharp from 'sharp';
import { signLink } from '../../src/adapters/storage/signing.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { startS3Server } from '../support/s3-server.ts';

let s3: Awaited<ReturnType<typeof startS3Server>>;
let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
let png: Buffer;

beforeAll(async () => {
  s3 = await startS3Server('adforge-media');
  png = await pngBytes(90, 60, '#22aa44');
  host = await startImageHost({ '/p.png': sendBytes(png, 'image/png') });
  svc = await startTestService({
    ...s3.env,
  });
});
afterAll(async () => {
  await svc?.close();
  await host?.close();
  await s3?.close();
});

describe('the whole service with STORAGE=s3', () => {
  it('stores product images in the bucket and answers presigned links valid 1 hour', async () => {
    const { key } = await svc.team();
    const res = await svc.api('POST', '/api/v1/products', {
      key,
      body: { name: 'Bottle', description: 'Steel bottle', category: 'outdoor', image_url: host.url('/p.png') },
    });
    expect(res.status).toBe(201);
    const link = new URL(res.body.image_path);
    expect(link.origin).toBe(s3.endpoint);
    expect(link.pathname).toMatch(/^\/adforge-media\/products\//);
    expect(link.searchParams.get('X-Amz-Expires')).toBe('3600');
    const fetched = await fetch(link);
    expect(fetched.status).toBe(200);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(png)).toBe(true);
  });

  it('serves the platform avatar thumbnails from the bucket', async () => {
    const { key } = await svc.team();
    const res = await svc.api('GET', '/api/v1/avatars', { key });
    const thumb = await fetch(res.body.data[0].thumbnail_url);
    expect(thumb.status).toBe(200);
    expect((await sharp(Buffer.from(await thumb.arrayBuffer())).metadata()).format).toBe('png');
  });

  it('answers a /files link given out while the files were on disk with a redirect to a presigned link expiring as it would have', async () => {
    const avatar = (await svc.api('GET', '/api/v1/avatars', { key: (await svc.team()).key })).body.data[0].thumbnail_url as string;
    const key = decodeURIComponent(new URL(avatar).pathname.replace(/^\/adforge-media\//, ''));
    const secret = (await svc.app.db.selectFrom('settings').select('value').where('name', '=', 'files_signing_secret').executeTakeFirstOrThrow()).value;
    const expires = Math.floor(Date.now() / 1000) + 600;
    const res = await svc.fetchUrl(`${svc.baseUrl}/files/${key}?expires=${expires}&signature=${signLink(key, expires, secret)}`);
    expect(res.status).toBe(302);
    const target = new URL(String(res.headers.location));
    expect(target.origin).toBe(s3.endpoint);
    expect(Number(target.searchParams.get('X-Amz-Expires'))).toBeGreaterThan(590);
    expect(Number(target.searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(600);
    const part = await fetch(target, { headers: { range: 'bytes=0-7' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);

    const forged = await svc.api('GET', `/files/${key}?expires=${expires}&signature=${'0'.repeat(64)}`);
    expect(forged.status).toBe(403);
    expect(forged.body.error.code).toBe('forbidden');
  });
});
