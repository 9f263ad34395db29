import { setTimeout as delay } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
import { neverSent } from '../net/never-sent.ts';
import { readAtMost } from '../net/read-at-most.ts';
import { retryAfterMs } from '../net/retry-after.ts';
import { createSafeDispatcher, isBlockedAddressError } from '../net/safe-dispatcher.ts';
import { MAX_GET_TARGET, TOKEN_HEADER, adsRequest, mapAd, mapBrand, readAdsPage, sourceMessage, type AdsRequest } from './meta-fields.ts';
import { AdSourceError, type AdSource, type SourceAd, type SourcePage } from '../../domain/ad-source.ts';

export interface MetaAdSourceOptions {
  /** e.g. https://api.scrapecreators.com, or any server with the same contract (see meta-fields.ts). */
  baseUrl: string;
  /** Sent as the x-api-key header; omitted when unset (a self-hosted source may need none). */
  accessToken?: string;
  /** Lets the source live on a private/loopback address: local setups and tests only. */
  allowPrivate?: boolean;
  /** Tries per page for server errors and a source that could not be reached; rate limiting has its own count of the same size. */
  maxAttempts?: number;
  /** First backoff wait; each further one doubles, up to maxWaitMs. */
  backoffMs?: number;
  /** The longest single wait. A Retry-After beyond it fails the read as throttled instead of blocking a worker. */
  maxWaitMs?: number;
  /** Per HTTP request, body included; ScrapeCreators' own client waits 60 s (scrapecreators-cli src/api-client.js). */
  timeoutMs?: number;
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on the timeout of every call. */
  callTimeoutCapMs?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

type Page = { records: Record<string, unknown>[]; cursor: string | null };
type Outcome = { ok: Page } | { throttled: number | null } | { retry: string; status?: number } | { tooLong: true };

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const SOURCE = 'the Ad Library source';
// ScrapeCreators' own client gives a call 60 s (scrapecreators-cli @ f9d093e, src/api-client.js) and never retries it.
const DEFAULT_TIMEOUT_MS = 60_000;
// ScrapeCreators bills every call it answers (apis.js: credits_remaining in each answer): a page
// whose answer was lost after it was sent may have been made and paid, and is not asked again.
const NOT_ASKED_AGAIN = 'the page was not asked again, since the source bills every call';

export function createMetaAdSource(opts: MetaAdSourceOptions): AdSource {
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 4);
  const backoffMs = opts.backoffMs ?? 1_000;
  const maxWaitMs = opts.maxWaitMs ?? 60_000;
  const timeoutMs = Math.min(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, opts.callTimeoutCapMs ?? Infinity);
  const sleep = opts.sleep ?? abortableSleep;
  const base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`);
  const token = opts.accessToken || undefined;
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'adforge/0.1 (+ad library)' };
  if (token) headers[TOKEN_HEADER] = token;
  // The source's own words may echo what we sent; never let the key reach a user-visible message.
  const quote = (body: unknown) => {
    const said = token ? sourceMessage(body).split(token).join('[redacted]') : sourceMessage(body);
    return said ? `: ${said}` : '';
  };
  const backoff = (n: number) => Math.min(backoffMs * 2 ** (n - 1), maxWaitMs);
  // The longest request line sent by GET; lowered when the source's server refuses a shorter one (414).
  let maxGetTarget = MAX_GET_TARGET;

  async function attempt(req: AdsRequest, pageId: string, signal: AbortSignal, dispatcher: Dispatcher): Promise<Outcome> {
    const timeout = AbortSignal.timeout(timeoutMs);
    let status: number, body: unknown, retryAfter: string | undefined;
    let answered = false;
    try {
      const res = await request(req.url, {
        method: req.method,
        headers: req.method === 'POST' ? { ...headers, 'content-type': 'application/json' } : headers,
        ...(req.method === 'POST' ? { body: req.body } : {}),
        dispatcher,
        signal: AbortSignal.any([signal, timeout]),
      });
      answered = true;
      status = res.statusCode;
      retryAfter = [res.headers['retry-after']].flat()[0];
      body = parseJson(await readAtMost(res.body, MAX_BODY_BYTES, () => new AdSourceError('failed', `${SOURCE} answered with more than ${MAX_BODY_BYTES / 1024 / 1024} MB`)));
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      if (e instanceof AdSourceError) throw e;
      if (isBlockedAddressError(e)) throw new AdSourceError('failed', `${SOURCE} is at a private or reserved address`, { cause: e });
      if (neverSent(e)) return { retry: 'could not be reached' };
      const lost = timeout.aborted ? `${SOURCE} did not answer within ${timeoutMs / 1000} s` : answered ? `the answer of ${SOURCE} was cut off` : `${SOURCE} dropped the connection`;
      throw new AdSourceError('failed', `${lost}; ${NOT_ASKED_AGAIN}`, { cause: e });
    }
    if (status >= 200 && status < 300) {
      const page = readAdsPage(body);
      if (page) return { ok: page };
      throw new AdSourceError('failed', `${SOURCE} answered in an unexpected format (no list of ads)${quote(body)}`, { status });
    }
    if (status === 429) return { throttled: retryAfterMs(retryAfter) };
    // 414 URI Too Long: refused before anything was read or charged; the same parameters go by POST.
    if (status === 414 && req.method === 'GET') return { tooLong: true };
    if (status === 401 || status === 403) {
      const why = token ? 'refused the access token' : 'requires an access token, and none is configured';
      throw new AdSourceError('unauthorized', `${SOURCE} ${why} (HTTP ${status}${quote(body)})`, { status });
    }
    if (status === 404) throw new AdSourceError('not_found', `${SOURCE} knows no page ${pageId} (HTTP 404${quote(body)})`, { status });
    if (status >= 500 || status === 408) return { retry: `answered HTTP ${status}`, status };
    throw new AdSourceError('failed', `${SOURCE} rejected the request (HTTP ${status}${quote(body)})`, { status });
  }

  /** One page of results; throttling and passing failures are waited out here, so reading resumes where it was. */
  async function fetchPage(pageId: string, cursor: string | null, signal: AbortSignal): Promise<Page> {
    if (!/^\d+$/.test(pageId)) throw new AdSourceError('not_found', `page id must be numeric, got "${pageId.slice(0, 40)}"`);
    let req = adsRequest(base, pageId, cursor, maxGetTarget);
    const agent = createSafeDispatcher({ allowPrivate: opts.allowPrivate ?? false, connectTimeoutMs: Math.min(timeoutMs, 10_000) });
    try {
      for (let failures = 0, throttles = 0; ; ) {
        signal.throwIfAborted();
        const outcome = await attempt(req, pageId, signal, agent);
        if ('ok' in outcome) return outcome.ok;
        if ('tooLong' in outcome) {
          maxGetTarget = Math.min(maxGetTarget, req.target - 1);
          req = adsRequest(base, pageId, cursor, maxGetTarget);
          continue;
        }
        if ('throttled' in outcome) {
          throttles += 1;
          const wait = outcome.throttled ?? backoff(throttles);
          if (throttles >= maxAttempts) throw throttled(`was still rate-limiting after ${throttles} tries`);
          if (wait > maxWaitMs) throw throttled(`asks to wait ${Math.ceil(wait / 1000)} s before trying again`);
          await sleep(wait, signal);
        } else {
          failures += 1;
          if (failures >= maxAttempts) {
            throw new AdSourceError('failed', `${SOURCE} ${outcome.retry} (${failures} attempts)`, { status: outcome.status });
          }
          await sleep(backoff(failures), signal);
        }
      }
    } finally {
      await agent.destroy().catch(() => {});
    }
  }

  const pageOf = (page: Page): SourcePage => ({
    ads: page.records.map(mapAd).filter((ad): ad is SourceAd => ad !== null),
    next: page.records.length > 0 && page.cursor ? page.cursor : null,
  });

  return {
    async first(pageId, signal) {
      const first = await fetchPage(pageId, null, signal);
      const brand = mapBrand(pageId, first.records);
      if (!brand) throw new AdSourceError('not_found', `the Ad Library shows no ads for page ${pageId}, so no profile to read`);
      return { brand, ...pageOf(first) };
    },
    page: async (pageId, cursor, signal) => pageOf(await fetchPage(pageId, cursor, signal)),
  };
}

const throttled = (what: string) => new AdSourceError('throttled', `${SOURCE} ${what}; try again later`, { status: 429 });

/** Rejects with the caller's abort reason (not a generic AbortError), so a cancelled job sees why. */
async function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch (e) {
    throw signal.aborted ? signal.reason : e;
  }
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

