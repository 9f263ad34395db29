import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { runFfmpeg } from '../../src/adapters/engines/ffmpeg.ts';
import { checkAnswer, loadContract, requestProblems, type Contract } from './contract.ts';
import { closeServer, listenOnLoopback, readBody } from './http-fake.ts';

/**
 * A local stand-in for the Ad Library source, ScrapeCreators (contracts:
 * test/contracts/scrapecreators/): the company-ads list with cursor paging, by GET (parameters in
 * the query) or by POST (the same parameters as a JSON body, the way ScrapeCreators documents for a
 * cursor grown too large for a GET), x-api-key auth, the free credit-balance read, and the media
 * its records link to. Behaviour is switched per test through `control`; every request is recorded.
 *
 * Every request is held to its contract; a broken one is refused the way ScrapeCreators refuses a
 * bad parameter: 400 with its error body `{success: false, error, errorStatus, message}` (the
 * shape of apis.js errorResponseExamples; a parameter out of range is a 400 in apis.js, LinkedIn
 * Search Posts' cursor), the message naming the field. Every JSON answer is checked against the
 * contract (checkAnswer).
 *
 * What it costs, as ScrapeCreators bills it (scrapecreators-cli @ f9d093e): every call to a data
 * endpoint is paid in credits (apis.js: each sample answer reports `credits_remaining`, a few
 * `credits_charged: 1`; the credit balance is read for free). The fake bills one credit per
 * company-ads answer of 200, counted when the answer is decided: the work is done and paid even
 * when the caller has gone before it arrives (a held answer, `delayMs`). Refusals (4xx, 5xx) are
 * not billed. With no credits left the call is refused 402 (src/output.js: "No credits
 * remaining"), and 429 is the rate limit ("Rate limited. Wait a moment and retry.").
 *
 * A GET whose request line is longer than `control.maxGetTarget` is refused before it reaches the
 * API, as the server in front of it would: 414 URI Too Long with an HTML page (RFC 9110
 * 15.5.15; nginx's default request-line buffer is 8 KiB). ScrapeCreators publishes no number for
 * "too large", so the fake's limit is a setting and the adapter's own limit sits well below it.
 */

export interface FakeRequest {
  method: string;
  path: string;
  /** The URL's query parameters (a POST's parameters are in `body`). */
  query: Record<string, string>;
  /** A POST's JSON body; undefined for a GET. */
  body: unknown;
  /** The call's parameters, from the query of a GET or the JSON body of a POST. */
  params: Record<string, unknown>;
  apiKey: string | undefined;
  /** Index of the result page the cursor asked for; undefined for media and unknown cursors. */
  page: number | undefined;
  status: number;
}

/** `onPage` limits a behaviour to one result page (0-based); without it every ads request counts. */
export interface FakeControl {
  /** The key requests must carry; null accepts any (or none): a self-hosted source needing no key. */
  token: string | null;
  /** Answer 429 this many times, with this Retry-After header when given. */
  throttle: { times: number; retryAfter?: string; onPage?: number };
  /** Answer `status` (default 500) this many times, or on every request. */
  fail: { times: number | 'always'; status?: number; onPage?: number };
  /** Hold every ads answer this long before sending it (timeouts); the call is billed all the same. */
  delayMs: number;
  /** With delayMs, hold only the answers to this result page (0-based). */
  delayOnPage?: number;
  /** Hold every media file this long before sending it (a slow CDN). */
  mediaDelayMs: number;
  /** Cut this many billed answers off half-way (the connection reset once the work was done and paid). */
  cutAnswers: number;
  /** Hand out the current page's own cursor again instead of the next one (a looping source). */
  repeatCursor: boolean;
  /** Answer 200 with an HTML page, as a misconfigured proxy in front of the source would. */
  htmlAnswer: boolean;
  /** Result pages per known page id; anything else answers 404. */
  pages: Map<string, unknown[][]>;
  /** Characters added to every cursor handed out: a cursor grown by long pagination. */
  cursorPadding: number;
  /** The longest GET request line (path and query) let through; a longer one is answered 414. */
  maxGetTarget: number;
  /** Credits left: what the credit-balance read answers, one less per billed call; at 0 every call is refused 402. */
  credits: number;
}

export const FIXTURE_PAGE_ID = '1234567890';
export const ADS_ROUTE = '/v1/facebook/adLibrary/company/ads';
export const CREDIT_BALANCE_ROUTE = '/v1/account/credit-balance';
/** The request line the fake lets a GET have by default: nginx's default 8 KiB buffer. */
export const DEFAULT_MAX_GET_TARGET = 8 * 1024;

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

/** The cursor of a result page; `padding` characters make it as long as a late page's real cursor. */
export const cursorFor = (page: number, padding = 0) => Buffer.from(`acme-page:${page}${padding > 0 ? `:${'x'.repeat(padding)}` : ''}`).toString('base64url');
const pageOf = (cursor: unknown): number | undefined => {
  if (cursor === undefined) return 0;
  if (typeof cursor !== 'string') return undefined;
  const m = /^acme-page:(\d+)(:x*)?$/.exec(Buffer.from(cursor, 'base64url').toString());
  return m ? Number(m[1]) : undefined;
};

const contracts = {
  get: loadContract('scrapecreators', 'company-ads'),
  post: loadContract('scrapecreators', 'company-ads-post'),
  balance: loadContract('scrapecreators', 'credit-balance'),
};

type Answer = { status: number; body: unknown; headers?: Record<string, string> };
const refusal = (status: number, error: string, message: string): Answer => ({ status, body: { success: false, error, errorStatus: status, message } });

export async function startMetaAdLibraryFake(opts: { token?: string | null } = {}) {
  const { png, mp4 } = await mediaBytes();
  const fixture = JSON.parse(await fs.readFile(fixtureFile, 'utf8')) as { pageId: string; pages: unknown[][] };
  const control: FakeControl = {
    token: opts.token === undefined ? 'test-token' : opts.token,
    throttle: { times: 0 },
    fail: { times: 0 },
    delayMs: 0,
    mediaDelayMs: 0,
    cutAnswers: 0,
    repeatCursor: false,
    htmlAnswer: false,
    pages: new Map([[fixture.pageId, fixture.pages]]),
    cursorPadding: 0,
    maxGetTarget: DEFAULT_MAX_GET_TARGET,
    credits: 4_200,
  };
  const requests: FakeRequest[] = [];
  let base = '';

  const applies = (rule: { onPage?: number }, page: number | undefined) => rule.onPage === undefined || rule.onPage === page;

  /** The key check, then the contract's; undefined when the request may be answered. */
  function refused(contract: Contract, req: http.IncomingMessage, parts: { query: Record<string, string>; body?: unknown }): Answer | undefined {
    const key = req.headers['x-api-key'];
    if (control.token !== null && key !== control.token) {
      // Echoes the key it got, as some servers do: the adapter must not pass it on to users.
      return refusal(401, 'unauthorized', `Invalid API key ${String(key ?? '')}`.trim());
    }
    // A source that needs no key (token null) is held to everything but the key header.
    const headers = control.token === null ? { ...req.headers, 'x-api-key': 'none needed' } : req.headers;
    const problems = requestProblems(contract, { headers, query: parts.query, ...(contract.request.body ? { body: parts.body } : {}) });
    if (problems.length > 0) return refusal(400, 'bad_request', problems.map((p) => p.message).join('; '));
    return undefined;
  }

  /** Billed calls (one credit each), in order: what ScrapeCreators was paid. */
  const billed: Array<{ pageId: unknown; page: number | undefined }> = [];

  function answerAds(params: Record<string, unknown>): Answer {
    const page = pageOf(params.cursor);
    const { throttle, fail } = control;
    if (control.credits <= 0) return refusal(402, 'payment_required', 'No credits remaining');
    if (throttle.times > 0 && applies(throttle, page)) {
      throttle.times -= 1;
      const headers: Record<string, string> = throttle.retryAfter ? { 'retry-after': throttle.retryAfter } : {};
      return { ...refusal(429, 'rate_limited', 'Too many requests'), headers };
    }
    if ((fail.times === 'always' || fail.times > 0) && applies(fail, page)) {
      if (fail.times !== 'always') fail.times -= 1;
      return refusal(fail.status ?? 500, 'scrape_failed', 'upstream failed');
    }
    const pages = control.pages.get(typeof params.pageId === 'string' ? params.pageId : '');
    if (!pages) return refusal(404, 'not_found', 'Company not found');
    if (page === undefined || (page > 0 && page >= pages.length)) return refusal(400, 'bad_request', 'invalid cursor');
    const next = control.repeatCursor ? page : page + 1;
    const results = JSON.parse(JSON.stringify(pages[page] ?? []).replaceAll('{{BASE}}', base)) as unknown[];
    control.credits -= 1;
    billed.push({ pageId: params.pageId, page });
    return { status: 200, body: { success: true, credits_remaining: control.credits, results, cursor: next < pages.length ? cursorFor(next, control.cursorPadding) : null } };
  }

  const server = http.createServer((req, res) => {
    // An answer outside the contract fails the test (an unhandled rejection) and the request alike.
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(e));
      throw e;
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const raw = await readBody(req);
    let body: unknown;
    if (req.method === 'POST') {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const params: Record<string, unknown> = req.method === 'POST' ? (typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}) : query;
    const record = (status: number, page?: number) =>
      requests.push({ method: req.method ?? '', path: url.pathname, query, body, params, apiKey: [req.headers['x-api-key']].flat()[0], page, status });
    const sendJson = (contract: Contract, a: Answer, page?: number) => {
      checkAnswer(contract, a.status, a.body);
      record(a.status, page);
      const text = JSON.stringify(a.body);
      const cut = a.status === 200 && contract !== contracts.balance && control.cutAnswers > 0;
      if (cut) control.cutAnswers -= 1;
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(a.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...a.headers });
        if (!cut) {
          res.end(text);
          return;
        }
        res.write(text.slice(0, Math.floor(text.length / 2)), () => setTimeout(() => res.destroy(), 20));
      };
      const held = control.delayMs > 0 && contract !== contracts.balance && (control.delayOnPage === undefined || control.delayOnPage === page);
      if (held) setTimeout(send, control.delayMs).unref();
      else send();
    };

    const mediaMatch = /^\/media\/[\w-]+\.(png|mp4)$/.exec(url.pathname);
    if (mediaMatch && req.method === 'GET') {
      const bytes = mediaMatch[1] === 'png' ? png : mp4;
      record(200);
      const sendMedia = () => {
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': mediaMatch[1] === 'png' ? 'image/png' : 'video/mp4', 'content-length': bytes.length });
        res.end(bytes);
      };
      if (control.mediaDelayMs > 0) setTimeout(sendMedia, control.mediaDelayMs).unref();
      else sendMedia();
      return;
    }
    if (url.pathname === CREDIT_BALANCE_ROUTE && req.method === 'GET') {
      sendJson(contracts.balance, refused(contracts.balance, req, { query }) ?? { status: 200, body: { creditCount: control.credits } });
      return;
    }
    if (url.pathname !== ADS_ROUTE || (req.method !== 'GET' && req.method !== 'POST')) {
      record(404);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"success":false,"error":"not_found"}');
      return;
    }
    if (req.method === 'GET' && (req.url ?? '').length > control.maxGetTarget) {
      const page = '<html><head><title>414 Request-URI Too Large</title></head><body><center><h1>414 Request-URI Too Large</h1></center></body></html>';
      checkAnswer(contracts.get, 414, page);
      record(414);
      res.writeHead(414, { 'content-type': 'text/html' }).end(page);
      return;
    }
    if (control.htmlAnswer) {
      record(200);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome to nginx!</body></html>');
      return;
    }
    const contract = req.method === 'POST' ? contracts.post : contracts.get;
    const answer = refused(contract, req, { query, body }) ?? answerAds(params);
    sendJson(contract, answer, pageOf(params.cursor));
  }
  base = await listenOnLoopback(server);
  const port = Number(new URL(base).port);

  return {
    baseUrl: base,
    port,
    control,
    requests,
    /** The requests for result pages, in order. */
    adsRequests: () => requests.filter((r) => r.path === ADS_ROUTE),
    /** The calls ScrapeCreators billed (one credit each), with the page id and result page each asked for. */
    billed,
    mediaUrl: (name: string) => `${base}/media/${name}`,
    close: () => closeServer(server),
  };
}

export type MetaAdLibraryFake = Awaited<ReturnType<typeof startMetaAdLibraryFake>>;
