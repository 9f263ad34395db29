import sharp from 'sharp';
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

  it('does not serve /files when storage is S3', async () => {
    const res = await svc.api('GET', '/files/avatars/platform/x.png?expires=1&signature=00');
    expect(res.status).toBe(404);
  });
});
