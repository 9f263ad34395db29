import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Storage, type S3Storage } from '../../src/adapters/storage/s3.ts';
import { startS3Server } from '../support/s3-server.ts';

const bucket = 'adforge-test';
const jpegBytes = Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex');

let server: Awaited<ReturnType<typeof startS3Server>>;
let storage: S3Storage;

beforeAll(async () => {
  server = await startS3Server(bucket);
  storage = createS3Storage({
    bucket,
    region: 'us-east-1',
    endpoint: server.endpoint,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
  });
});

afterAll(async () => {
  await server?.close();
});

describe('s3 storage against s3rver', () => {
  const key = 'products/0b6f6e0e-2a8e-4c55-8c57-1d1c1c1a2b3c.jpg';

  it('puts and gets an object with its content type', async () => {
    await storage.put(key, jpegBytes, 'image/jpeg');
    expect(await storage.get(key)).toEqual({ bytes: jpegBytes, contentType: 'image/jpeg' });
  });

  it('returns null for a missing key', async () => {
    expect(await storage.get('products/missing.jpg')).toBeNull();
  });

  it('serves the object through a presigned link fetched without credentials', async () => {
    const url = await storage.signedUrl(key, 60);
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('60');
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(jpegBytes);
  });

  it('has the server refuse a presigned link once it expires', async () => {
    const url = await storage.signedUrl(key, 1);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const response = await fetch(url);
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('expired');
  });

  it('deletes, and deleting again is not an error', async () => {
    await storage.delete(key);
    expect(await storage.get(key)).toBeNull();
    await expect(storage.delete(key)).resolves.toBeUndefined();
    expect((await fetch(await storage.signedUrl(key))).status).toBe(404);
  });

  it('signs for the public endpoint when one is configured', async () => {
    const behindProxy = createS3Storage({
      bucket,
      region: 'us-east-1',
      endpoint: 'http://minio.internal:9000',
      publicEndpoint: 'https://media.example.com',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    });
    const url = new URL(await behindProxy.signedUrl(key));
    expect(url.origin).toBe('https://media.example.com');
    expect(url.pathname).toBe(`/${bucket}/${key}`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
  });

  it('refuses invalid keys before calling the server', async () => {
    await expect(storage.put('../escape.jpg', jpegBytes, 'image/jpeg')).rejects.toMatchObject({ code: 'validation_error' });
  });
});
