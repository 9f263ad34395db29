import { request as httpRequest } from 'node:http';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '../../src/domain/errors.ts';
import { registerFileRoutes } from '../../src/http/files-route.ts';
import { createLocalStorage, type LocalStorage } from '../../src/adapters/storage/local.ts';
import { nowInSeconds, signLink } from '../../src/adapters/storage/signing.ts';

const secret = 'local-storage-test-secret';
const pngBytes = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

let dataDir: string;
let root: string;
let storage: LocalStorage;
let app: FastifyInstance;
let origin: string;

/** Sends the path exactly as written: fetch would normalise `..` and `%2e%2e` away before sending. */
function rawGet(pathAndQuery: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path: pathAndQuery, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function linkFor(key: string, expires: number): string {
  return `${origin}/files/${key}?expires=${expires}&signature=${signLink(key, expires, secret)}`;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'adforge-storage-local-'));
  root = path.join(dataDir, 'files');
  app = Fastify();
  app.setErrorHandler((error, _request, reply) => {
    if (isAppError(error)) return reply.status(error.status).send(error.toBody());
    return reply.status(500).send({ error: { code: 'internal_error', message: 'unexpected' } });
  });
  // The origin is only known after listen(), so links are signed by a second instance over the same root.
  registerFileRoutes(app, { storage: createLocalStorage({ root, publicBaseUrl: 'http://route.invalid', signingSecret: secret }) });
  origin = await app.listen({ host: '127.0.0.1', port: 0 });
  storage = createLocalStorage({ root, publicBaseUrl: `${origin}/`, signingSecret: secret });
});

afterAll(async () => {
  await app?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('local storage', () => {
  it('round-trips bytes and content type, then deletes', async () => {
    const key = 'products/roundtrip.png';
    await storage.put(key, pngBytes, 'image/png');
    expect(await storage.get(key)).toEqual({ bytes: pngBytes, contentType: 'image/png' });

    await storage.put(key, Buffer.from('replaced'), 'text/plain');
    expect(await storage.get(key)).toEqual({ bytes: Buffer.from('replaced'), contentType: 'text/plain' });

    await storage.delete(key);
    expect(await storage.get(key)).toBeNull();
    await expect(storage.delete(key)).resolves.toBeUndefined();
  });

  it('stores a stream of the announced size, and refuses one of another size without leaving its bytes', async () => {
    await storage.putStream('exports/a.zip', Readable.from([Buffer.from('abc'), Buffer.from('de')]), { contentType: 'application/zip', maxBytes: 5, size: 5 });
    expect(await storage.get('exports/a.zip')).toEqual({ bytes: Buffer.from('abcde'), contentType: 'application/zip' });
    await expect(storage.putStream('exports/b.zip', Readable.from([Buffer.from('abc')]), { contentType: 'application/zip', maxBytes: 5, size: 5 })).rejects.toMatchObject({
      code: 'validation_error',
      message: 'stored 3 bytes where 5 were announced',
    });
    expect(await storage.get('exports/b.zip')).toBeNull();
    expect(await readdir(path.join(root, '.tmp')).catch(() => [])).toEqual([]);
  });

  it('counts a stream of unknown length as it arrives: past the limit nothing lands, under it the size is answered', async () => {
    const chunks = () => Readable.from([Buffer.alloc(4, 1), Buffer.alloc(4, 2), Buffer.alloc(4, 3)]);
    await expect(storage.putStream('media/big.mp4', chunks(), { contentType: 'video/mp4', maxBytes: 10 })).rejects.toMatchObject({
      code: 'validation_error',
      message: 'the file is larger than 10 bytes',
    });
    expect(await storage.get('media/big.mp4')).toBeNull();
    expect(await readdir(path.join(root, '.tmp')).catch(() => [])).toEqual([]);
    // Not even its content-type sidecar.
    expect(await readdir(path.join(root, 'media'))).toEqual([]);
    await expect(storage.putStream('media/ok.mp4', chunks(), { contentType: 'video/mp4', maxBytes: 12 })).resolves.toEqual({ size: 12 });
    const part = await storage.openStream('media/ok.mp4', { start: 3, end: 8 });
    expect(part?.size).toBe(12);
    expect(Buffer.concat(await part!.stream.toArray())).toEqual(Buffer.from([1, 2, 2, 2, 2, 3]));
  });

  it('keeps the content type the caller gave, whatever the extension says', async () => {
    await storage.put('renders/no-extension', pngBytes, 'image/webp');
    expect((await storage.get('renders/no-extension'))?.contentType).toBe('image/webp');
  });

  it('leaves no temp files behind and writes nothing outside the root', async () => {
    await storage.put('a/b/c.bin', Buffer.from([1, 2, 3]), 'application/octet-stream');
    expect(await readdir(path.join(root, '.tmp'))).toEqual([]);
    expect(await readdir(dataDir)).toEqual(['files']);
  });

  it('returns null for a key whose path is a directory', async () => {
    await storage.put('dir/inner.txt', Buffer.from('x'), 'text/plain');
    expect(await storage.get('dir')).toBeNull();
  });

  it('refuses invalid keys', async () => {
    for (const key of ['../x', '/abs.png', 'a/../b', 'a//b', 'a/./b', '.hidden', 'a/.b.meta.json', 'sp ace', 'ü.png', '', 'a\\b', 'a/']) {
      await expect(storage.put(key, pngBytes, 'image/png'), key).rejects.toMatchObject({ code: 'validation_error' });
      await expect(storage.get(key), key).rejects.toMatchObject({ code: 'validation_error' });
      await expect(storage.signedUrl(key), key).rejects.toMatchObject({ code: 'validation_error' });
    }
  });

  it('refuses link lifetimes outside one second to one week', async () => {
    for (const ttl of [0, -5, 1.5, 7 * 24 * 3600 + 1]) {
      await expect(storage.signedUrl('products/x.png', ttl)).rejects.toMatchObject({ code: 'validation_error' });
    }
  });

  it('signs links for an hour by default', async () => {
    const url = new URL(await storage.signedUrl('products/x.png'));
    expect(`${url.origin}${url.pathname}`).toBe(`${origin}/files/products/x.png`);
    const expires = Number(url.searchParams.get('expires'));
    expect(expires - nowInSeconds()).toBeGreaterThanOrEqual(3599);
    expect(expires - nowInSeconds()).toBeLessThanOrEqual(3600);
    expect(url.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('GET /files/*', () => {
  const key = 'products/served.png';
  beforeAll(async () => {
    await storage.put(key, pngBytes, 'image/png');
  });

  it('serves a fresh link with the bytes, type and caching headers', async () => {
    const response = await fetch(await storage.signedUrl(key, 120));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('cache-control')).toMatch(/^private, max-age=(119|120)$/);
    expect(response.headers.get('content-length')).toBe(String(pngBytes.length));
    expect(Buffer.from(await response.arrayBuffer())).toEqual(pngBytes);
  });

  it('refuses an expired link with 403', async () => {
    const response = await fetch(linkFor(key, nowInSeconds() - 1));
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: { code: 'forbidden', message: 'the link has expired' } });
  });

  it('refuses tampered links with 403', async () => {
    await storage.put('products/other.png', pngBytes, 'image/png');
    const good = new URL(await storage.signedUrl(key, 120));
    const expires = good.searchParams.get('expires') ?? '';
    const signature = good.searchParams.get('signature') ?? '';
    const forged = [
      `${origin}/files/products/other.png?expires=${expires}&signature=${signature}`,
      `${origin}/files/${key}?expires=${Number(expires) + 3600}&signature=${signature}`,
      `${origin}/files/${key}?expires=${expires}&signature=${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`,
      `${origin}/files/${key}?expires=${expires}&signature=short`,
      `${origin}/files/${key}?expires=${expires}&signature=${signature}&signature=${signature}`,
      `${origin}/files/${key}?expires=${expires}`,
      `${origin}/files/${key}`,
    ];
    for (const url of forged) {
      const response = await fetch(url);
      expect(response.status, url).toBe(403);
      expect(await response.json(), url).toEqual({ error: { code: 'forbidden', message: 'the link signature is invalid' } });
    }
  });

  it('answers 404 for a validly signed link to a missing file', async () => {
    const response = await fetch(await storage.signedUrl('products/never-written.png'));
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('refuses path traversal, even with a signature made for the traversing key', async () => {
    await writeFile(path.join(dataDir, 'secret.txt'), 'do not serve');
    const expires = nowInSeconds() + 60;
    const attempts = ['../secret.txt', '%2e%2e/secret.txt', '%2E%2E%2Fsecret.txt', 'products/..%2f..%2fsecret.txt', '..%5csecret.txt'];
    for (const attempt of attempts) {
      for (const signedKey of [attempt, decodeURIComponent(attempt)]) {
        const { status, body } = await rawGet(`/files/${attempt}?expires=${expires}&signature=${signLink(signedKey, expires, secret)}`);
        expect(status, attempt).toBe(403);
        expect(JSON.parse(body), attempt).toEqual({ error: { code: 'forbidden', message: 'the link signature is invalid' } });
      }
    }
  });

  it('does not serve the content-type sidecars', async () => {
    const sidecar = 'products/.served.png.meta.json';
    const response = await fetch(linkFor(sidecar, nowInSeconds() + 60));
    expect(response.status).toBe(403);
    expect(await response.text()).not.toContain('image/png');
  });
});
