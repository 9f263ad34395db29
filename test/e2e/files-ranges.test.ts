import fs from 'node:fs/promises';
import path from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';

// /files serves one byte range as asked over real HTTPS, as a <video> player seeking or a
// download resuming asks for it; HEAD answers the headers alone.

let svc: TestService;
let agent: Agent;
let link: string;
// Every byte different from its neighbours, so a slice off by one shows.
const FILE = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7 + (i >> 8)) & 0xff));

beforeAll(async () => {
  svc = await startTestService();
  agent = new Agent({ connect: { ca: await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8') } });
  await svc.app.storage.put('tests/ranges.mp4', FILE, 'video/mp4');
  link = await svc.app.storage.signedUrl('tests/ranges.mp4');
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
});

async function get(headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
  const res = await request(link, { method, headers, dispatcher: agent });
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

describe('/files byte ranges', () => {
  it('answers the whole file 200 with Accept-Ranges: bytes when no range is asked', async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['content-length']).toBe(String(FILE.length));
    expect(res.bytes.equals(FILE)).toBe(true);
  });

  it('answers bytes=a-b, bytes=a- and bytes=-n with 206, Content-Range and exactly those bytes', async () => {
    const cases: [string, number, number][] = [
      ['bytes=0-0', 0, 0],
      ['bytes=100-1099', 100, 1099],
      ['bytes=99000-', 99_000, 99_999],
      ['bytes=-500', 99_500, 99_999],
      ['bytes=99990-200000', 99_990, 99_999],
      ['bytes=-200000', 0, 99_999],
      ['BYTES=5-9', 5, 9],
    ];
    for (const [range, start, end] of cases) {
      const res = await get({ range });
      expect(res.status, range).toBe(206);
      expect(res.headers['content-range'], range).toBe(`bytes ${start}-${end}/${FILE.length}`);
      expect(res.headers['content-length'], range).toBe(String(end - start + 1));
      expect(res.headers['content-type']).toBe('video/mp4');
      expect(res.headers['accept-ranges']).toBe('bytes');
      expect(res.bytes.equals(FILE.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it('answers a range past the end (or -0) with 416 and Content-Range: bytes */size', async () => {
    for (const range of ['bytes=100000-', 'bytes=100000-100010', 'bytes=-0']) {
      const res = await get({ range });
      expect(res.status, range).toBe(416);
      expect(res.headers['content-range']).toBe(`bytes */${FILE.length}`);
      expect(JSON.parse(res.bytes.toString()).error.code).toBe('validation_error');
    }
  });

  it('resumes under If-Range with the ETag it was given; another validator or a date gets the whole file', async () => {
    const first = await get();
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(first.headers['last-modified']).toBeTruthy();
    const resumed = await get({ range: 'bytes=50000-', 'if-range': etag });
    expect(resumed.status).toBe(206);
    expect(resumed.bytes.equals(FILE.subarray(50_000))).toBe(true);
    for (const ifRange of ['"other"', `W/${etag}`, String(first.headers['last-modified'])]) {
      const res = await get({ range: 'bytes=50000-', 'if-range': ifRange });
      expect(res.status, ifRange).toBe(200);
      expect(res.bytes.equals(FILE)).toBe(true);
    }
  });

  it('serves the whole file 200 for several ranges, a malformed header or another unit', async () => {
    for (const headers of [{ range: 'bytes=0-1,5-9' }, { range: 'bytes=9-5' }, { range: 'bytes=abc' }, { range: 'items=0-5' }, { range: 'bytes=-' }]) {
      const res = await get(headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.bytes.equals(FILE)).toBe(true);
    }
  });

  it('answers HEAD with the headers a GET would carry and no body, ranged or not', async () => {
    const whole = await get({}, 'HEAD');
    expect(whole.status).toBe(200);
    expect(whole.headers['content-length']).toBe(String(FILE.length));
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(whole.bytes.length).toBe(0);
    const part = await get({ range: 'bytes=10-19' }, 'HEAD');
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${FILE.length}`);
    expect(part.headers['content-length']).toBe('10');
    expect(part.bytes.length).toBe(0);
  });

  it('checks the signature before any range is read: a tampered link is 403 whatever the Range', async () => {
    const bad = new URL(link);
    bad.searchParams.set('signature', '0'.repeat(64));
    const res = await request(bad, { headers: { range: 'bytes=0-10' }, dispatcher: agent });
    expect(res.statusCode).toBe(403);
    await res.body.dump();
  });
});
