import { Readable } from 'node:stream';
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

  it('streams an object of unknown length in parts (multipart past 5 MB) and reads a range of it', async () => {
    const part = (n: number) => Buffer.alloc(1024 * 1024, n);
    const chunks = Array.from({ length: 9 }, (_, i) => part(i));
    await expect(storage.putStream('media/nine.bin', Readable.from(chunks), { contentType: 'video/mp4', maxBytes: 20 * 1024 * 1024 })).resolves.toEqual({ size: 9 * 1024 * 1024 });
    const whole = await storage.openStream('media/nine.bin');
    expect(whole?.size).toBe(9 * 1024 * 1024);
    expect(whole?.contentType).toBe('video/mp4');
    expect(Buffer.concat(await whole!.stream.toArray()).equals(Buffer.concat(chunks))).toBe(true);
    const range = await storage.openStream('media/nine.bin', { start: 1024 * 1024 - 2, end: 1024 * 1024 + 1 });
    expect(range?.size).toBe(9 * 1024 * 1024);
    expect(Buffer.concat(await range!.stream.toArray())).toEqual(Buffer.from([0, 0, 1, 1]));
  });

  it('stores nothing when a stream passes its limit', async () => {
    const chunks = Array.from({ length: 3 }, () => Buffer.alloc(4 * 1024 * 1024, 7));
    await expect(storage.putStream('media/over.bin', Readable.from(chunks), { contentType: 'video/mp4', maxBytes: 10 * 1024 * 1024 })).rejects.toMatchObject({
      code: 'validation_error',
      message: `the file is larger than ${10 * 1024 * 1024} bytes`,
    });
    expect(await storage.openStream('media/over.bin')).toBeNull();
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
