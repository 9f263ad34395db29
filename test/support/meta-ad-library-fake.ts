import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { runFfmpeg } from '../../src/adapters/engines/ffmpeg.ts';
import { closeServer, listenOnLoopback } from './http-fake.ts';

/**
 * A local stand-in for the Ad Library source (contract: src/adapters/ad-library-source/meta-fields.ts): the
 * company-ads list with cursor paging and x-api-key auth, plus the media its records link to.
 * Behaviour is switched per test through `control`; every request is recorded in `requests`.
 */

export interface FakeRequest {
  path: string;
  query: Record<string, string>;
  apiKey: string | undefined;
  /** Index of the result page the cursor asked for; undefined for media and unknown cursors. */
  page: number | undefined;
  status: number;
}

/** `onPage` limits a behaviour to one result page (0-based); without it every ads request counts. */
export interface FakeControl {
  /** The key requests must carry; null accepts any (or none). */
  token: string | null;
  /** Answer 429 this many times, with this Retry-After header when given. */
  throttle: { times: number; retryAfter?: string; onPage?: number };
  /** Answer `status` (default 500) this many times, or on every request. */
  fail: { times: number | 'always'; status?: number; onPage?: number };
  /** Hold every ads answer this long before sending it (timeouts). */
  delayMs: number;
  /** Hand out the current page's own cursor again instead of the next one (a looping source). */
  repeatCursor: boolean;
  /** Answer 200 with an HTML page, as a misconfigured proxy in front of the source would. */
  htmlAnswer: boolean;
  /** Result pages per known page id; anything else answers 404. */
  pages: Map<string, unknown[][]>;
}

export const FIXTURE_PAGE_ID = '1234567890';
export const ADS_ROUTE = '/v1/facebook/adLibrary/company/ads';

const fixtureFile = new URL('../fixtures/meta-ad-library/acme-ads.json', import.meta.url);
let media: Promise<{ png: Buffer; mp4: Buffer }> | undefined;

/** A real PNG and a real MP4, made once per test process. */
export function mediaBytes(): Promise<{ png: Buffer; mp4: Buffer }> {
  media ??= (async () => {
    const png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#c0ffee' } }).png().toBuffer();
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-fake-media-'));
    try {
      const file = path.join(dir, 'clip.mp4');
      await runFfmpeg(['-f', 'lavfi', '-i', 'color=c=blue:s=32x32:d=0.4', '-c:v', 'mpeg4', '-pix_fmt', 'yuv420p', file]);
      return { png, mp4: await fs.readFile(file) };
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  })();
  return media;
}

export const cursorFor = (page: number) => Buffer.from(`acme-page:${page}`).toString('base64url');
const pageOf = (cursor: string | undefined): number | undefined => {
  if (!cursor) return 0;
  const m = /^acme-page:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  return m ? Number(m[1]) : undefined;
};

export async function startMetaAdLibraryFake(opts: { token?: string | null } = {}) {
  const { png, mp4 } = await mediaBytes();
  const fixture = JSON.parse(await fs.readFile(fixtureFile, 'utf8')) as { pageId: string; pages: unknown[][] };
  const control: FakeControl = {
    token: opts.token === undefined ? 'test-token' : opts.token,
    throttle: { times: 0 },
    fail: { times: 0 },
    delayMs: 0,
    repeatCursor: false,
    htmlAnswer: false,
    pages: new Map([[fixture.pageId, fixture.pages]]),
  };
  const requests: FakeRequest[] = [];
  let base = '';

  const applies = (rule: { onPage?: number }, page: number | undefined) => rule.onPage === undefined || rule.onPage === page;

  function answerAds(url: URL, req: http.IncomingMessage): { status: number; body: unknown; headers?: Record<string, string> } {
    const page = pageOf(url.searchParams.get('cursor') ?? undefined);
    const key = req.headers['x-api-key'];
    if (control.token !== null && key !== control.token) {
      // Echoes the key it got, as some servers do: the adapter must not pass it on to users.
      return { status: 401, body: { success: false, error: 'unauthorized', message: `Invalid API key ${String(key ?? '')}`.trim() } };
    }
    const { throttle, fail } = control;
    if (throttle.times > 0 && applies(throttle, page)) {
      throttle.times -= 1;
      const headers: Record<string, string> = throttle.retryAfter ? { 'retry-after': throttle.retryAfter } : {};
      return { status: 429, body: { success: false, error: 'rate_limited', message: 'Too many requests' }, headers };
    }
    if ((fail.times === 'always' || fail.times > 0) && applies(fail, page)) {
      if (fail.times !== 'always') fail.times -= 1;
      return { status: fail.status ?? 500, body: { success: false, error: 'scrape_failed', message: 'upstream failed' } };
    }
    const pages = control.pages.get(url.searchParams.get('pageId') ?? '');
    if (!pages) return { status: 404, body: { success: false, error: 'not_found', message: 'Company not found' } };
    if (page === undefined || (page > 0 && page >= pages.length)) {
      return { status: 400, body: { success: false, error: 'bad_request', message: 'invalid cursor' } };
    }
    const next = control.repeatCursor ? page : page + 1;
    const results = JSON.parse(JSON.stringify(pages[page] ?? []).replaceAll('{{BASE}}', base)) as unknown[];
    return { status: 200, body: { success: true, results, cursor: next < pages.length ? cursorFor(next) : null } };
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const record = (status: number, page?: number) =>
      requests.push({
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        apiKey: [req.headers['x-api-key']].flat()[0],
        page,
        status,
      });
    const mediaMatch = /^\/media\/[\w-]+\.(png|mp4)$/.exec(url.pathname);
    if (mediaMatch) {
      const bytes = mediaMatch[1] === 'png' ? png : mp4;
      record(200);
      res.writeHead(200, { 'content-type': mediaMatch[1] === 'png' ? 'image/png' : 'video/mp4', 'content-length': bytes.length });
      res.end(bytes);
      return;
    }
    if (url.pathname !== ADS_ROUTE) {
      record(404);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"success":false,"error":"not_found"}');
      return;
    }
    if (control.htmlAnswer) {
      record(200);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome to nginx!</body></html>');
      return;
    }
    const answer = answerAds(url, req);
    record(answer.status, pageOf(url.searchParams.get('cursor') ?? undefined));
    const send = () => {
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify(answer.body));
    };
    if (control.delayMs > 0) setTimeout(send, control.delayMs).unref();
    else send();
  });
  base = await listenOnLoopback(server);
  const port = Number(new URL(base).port);

  return {
    baseUrl: base,
    port,
    control,
    requests,
    /** The requests for result pages, in order. */
    adsRequests: () => requests.filter((r) => r.path === ADS_ROUTE),
    mediaUrl: (name: string) => `${base}/media/${name}`,
    close: () => closeServer(server),
  };
}

export type MetaAdLibraryFake = Awaited<ReturnType<typeof startMetaAdLibraryFake>>;
