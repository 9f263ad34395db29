import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProviderClient, errorMessage } from '../../src/adapters/engines/upstream-http.ts';
import { buffer } from 'node:stream/consumers';
import { MAX_VIDEO_HOPS, openVideoFile } from '../../src/adapters/engines/gemini/video-file.ts';

const readVideoFile = async (...args: Parameters<typeof openVideoFile>) => buffer(await openVideoFile(...args));
import { DownloadError } from '../../src/adapters/net/download.ts';
import { closeServer, listenOnLoopback } from '../support/http-fake.ts';

/*
 * Reading a Veo result: the file URI on the API's origin answers with redirects (as Google does),
 * the key is sent to that origin only, the hops are bounded, and a passing failure of the API is a
 * failed download (the generation asks for the link again) rather than the provider's refusal.
 */
const KEY = 'AIza-video-file-test';
const VIDEO = Buffer.from('fake mp4 bytes');
const seen: Array<{ server: 'api' | 'store'; path: string; key: string | undefined }> = [];
let api: http.Server;
let store: http.Server;
let apiBase = '';
let storeBase = '';

beforeAll(async () => {
  api = http.createServer((req, res) => {
    seen.push({ server: 'api', path: req.url ?? '', key: req.headers['x-goog-api-key'] as string | undefined });
    const path = req.url ?? '';
    // One hop on the API's own origin (relative Location), then away to the store.
    if (path.startsWith('/v1beta/files/abc:download')) return res.writeHead(302, { location: '/v1beta/files/abc:redirected' }).end();
    if (path.startsWith('/v1beta/files/abc:redirected')) return res.writeHead(307, { location: `${storeBase}/bucket/abc.mp4?X-Goog-Signature=s` }).end();
    if (path.startsWith('/v1beta/files/loop')) return res.writeHead(302, { location: '/v1beta/files/loop' }).end();
    if (path.startsWith('/v1beta/files/busy')) return res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' } }));
    if (path.startsWith('/v1beta/files/direct')) return res.writeHead(200, { 'content-type': 'video/mp4' }).end(VIDEO);
    res.writeHead(404).end();
  });
  store = http.createServer((req, res) => {
    seen.push({ server: 'store', path: req.url ?? '', key: req.headers['x-goog-api-key'] as string | undefined });
    res.writeHead(200, { 'content-type': 'video/mp4' }).end(VIDEO);
  });
  apiBase = await listenOnLoopback(api);
  storeBase = await listenOnLoopback(store);
});
afterAll(async () => {
  await Promise.all([closeServer(api), closeServer(store)]);
});

function reader() {
  const { call } = createProviderClient({ provider: 'Gemini', baseUrl: `${apiBase}/v1beta`, allowPrivate: true, headers: { 'x-goog-api-key': KEY }, timeoutMs: 5_000, maxBytes: 1 << 20, message: errorMessage });
  return { call, apiOrigin: new URL(apiBase).origin, maxBytes: 1 << 20, allowPrivate: true, timeoutMs: 5_000 };
}

describe('the Veo video file', () => {
  it('follows the redirects: the key goes to the API origin only, the signed store link is read without it', async () => {
    seen.length = 0;
    const bytes = await readVideoFile(`${apiBase}/v1beta/files/abc:download?alt=media`, reader(), AbortSignal.timeout(5_000));
    expect(bytes.equals(VIDEO)).toBe(true);
    expect(seen).toEqual([
      { server: 'api', path: '/v1beta/files/abc:download?alt=media', key: KEY },
      { server: 'api', path: '/v1beta/files/abc:redirected', key: KEY },
      { server: 'store', path: '/bucket/abc.mp4?X-Goog-Signature=s', key: undefined },
    ]);
  });

  it('reads a file answered at once', async () => {
    expect((await readVideoFile(`${apiBase}/v1beta/files/direct:download?alt=media`, reader(), AbortSignal.timeout(5_000))).equals(VIDEO)).toBe(true);
  });

  it(`stops after ${MAX_VIDEO_HOPS} redirects`, async () => {
    seen.length = 0;
    const e = await readVideoFile(`${apiBase}/v1beta/files/loop`, reader(), AbortSignal.timeout(5_000)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DownloadError);
    expect((e as DownloadError).reason).toBe('too_many_redirects');
    expect(seen).toHaveLength(MAX_VIDEO_HOPS);
  });

  it('a 503 from the API is a failed download the generation retries, not a refusal', async () => {
    const e = await readVideoFile(`${apiBase}/v1beta/files/busy:download?alt=media`, reader(), AbortSignal.timeout(5_000)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DownloadError);
  });
});
