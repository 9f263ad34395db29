import { request } from 'undici';
import { finished, type Readable } from 'node:stream';
import { AppError } from '../../domain/errors.ts';
import type { AddressPolicy } from './address-policy.ts';
import { limitedStream } from './byte-limit.ts';
import { readAtMost } from './read-at-most.ts';
import { createSafeDispatcher, isBlockedAddressError } from './safe-dispatcher.ts';

export type DownloadFailure =
  | 'invalid_url'
  | 'blocked_address'
  | 'too_large'
  | 'timeout'
  | 'http_status'
  | 'too_many_redirects'
  | 'network';

/** A refused or failed download; `message` is safe to show to the user who supplied the URL. */
export class DownloadError extends Error {
  readonly reason: DownloadFailure;

  constructor(reason: DownloadFailure, message: string) {
    super(message);
    this.name = 'DownloadError';
    this.reason = reason;
  }
}

export interface DownloadOptions {
  maxBytes: number;
  allowPrivate: boolean;
  connectTimeoutMs?: number;
  /** Budget for the whole download: every redirect hop and the body. */
  timeoutMs?: number;
  maxRedirects?: number;
  /**
   * Replaces the address rule derived from allowPrivate. Every test server listens on
   * loopback, so a test that must prove a redirect to a forbidden address is refused
   * declares 127.0.0.1 "public" here and redirects somewhere else on loopback.
   */
  policy?: AddressPolicy;
}

export interface DownloadResult {
  bytes: Buffer;
  contentType: string | null;
  finalUrl: string;
}

/** A download answered as it arrives: the body fails with a DownloadError (too large, cut, timed out). */
export interface DownloadStream {
  body: Readable;
  contentType: string | null;
  finalUrl: string;
  /** The Content-Length the server declared (never above maxBytes), when it declared one. */
  declaredSize?: number;
}

const MB = 1024 * 1024;
const REQUEST_HEADERS = { 'accept-encoding': 'identity', 'user-agent': 'adforge/0.1 (+media fetch)' };
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/**
 * The whole body in memory: only for what is small by nature (JSON, an image we decode, bounded
 * by maxBytes). Media goes through openDownload and into storage as it arrives.
 */
export async function download(rawUrl: string, opts: DownloadOptions): Promise<DownloadResult> {
  const d = await openDownload(rawUrl, opts);
  const bytes = await readAtMost(d.body, opts.maxBytes, () => tooLarge(opts.maxBytes));
  return { bytes, contentType: d.contentType, finalUrl: d.finalUrl };
}

/**
 * A download whose body streams from the socket: the same SSRF-safe dispatcher, redirects and
 * timeout (the whole budget covers the body too) as download(), with the size limit counted as the
 * bytes arrive. The connection is released when the body ends, fails or is destroyed.
 */
export async function openDownload(rawUrl: string, opts: DownloadOptions): Promise<DownloadStream> {
  const maxRedirects = opts.maxRedirects ?? 3;
  const signal = AbortSignal.timeout(opts.timeoutMs ?? 20_000);
  const dispatcher = createSafeDispatcher({
    allowPrivate: opts.allowPrivate,
    connectTimeoutMs: opts.connectTimeoutMs ?? 5_000,
    policy: opts.policy,
  });
  const release = () => void dispatcher.destroy().catch(() => {});
  try {
    let url = parseHttpUrl(rawUrl);
    for (let redirects = 0; ; redirects++) {
      // identity: the size limit and the sniffing both need the bytes as stored, not a compressed stream.
      const res = await request(url, { method: 'GET', dispatcher, signal, headers: REQUEST_HEADERS });
      if (redirectStatuses.has(res.statusCode)) {
        discard(res.body);
        if (redirects >= maxRedirects) {
          throw new DownloadError('too_many_redirects', `the URL redirects more than ${maxRedirects} times`);
        }
        const location = headerValue(res.headers['location']);
        if (!location) throw new DownloadError('http_status', `the server answered ${res.statusCode} without a Location`);
        url = parseHttpUrl(location, url);
        continue;
      }
      if (res.statusCode < 200 || res.statusCode > 299) {
        discard(res.body);
        throw new DownloadError('http_status', `the server answered with HTTP status ${res.statusCode}`);
      }
      const declaredLength = Number(headerValue(res.headers['content-length']) ?? Number.NaN);
      if (declaredLength > opts.maxBytes) {
        discard(res.body);
        throw tooLarge(opts.maxBytes);
      }
      const body = limitedStream(res.body, opts.maxBytes, () => tooLarge(opts.maxBytes), (e) => toDownloadError(e, signal));
      finished(body, release);
      return {
        body,
        contentType: headerValue(res.headers['content-type']) ?? null,
        finalUrl: url.href,
        ...(Number.isSafeInteger(declaredLength) && declaredLength >= 0 ? { declaredSize: declaredLength } : {}),
      };
    }
  } catch (e) {
    release();
    throw toDownloadError(e, signal);
  }
}

/** Maps a download failure to the validation error callers report for the request field that held the URL. */
export function downloadErrorToAppError(field: string, e: unknown): AppError {
  if (e instanceof DownloadError) return new AppError('validation_error', `${field}: ${e.message}`);
  throw e;
}

function parseHttpUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new DownloadError('invalid_url', 'the URL is not valid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DownloadError('invalid_url', 'only http and https URLs are allowed');
  }
  return url;
}

/**
 * Drops a body we will not read. Destroying an undici body emits an AbortError, and with no
 * listener that would be an uncaught exception that takes the process down.
 */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

function tooLarge(maxBytes: number): DownloadError {
  const limit = maxBytes % MB === 0 ? `${maxBytes / MB} MB` : `${maxBytes} bytes`;
  return new DownloadError('too_large', `the file is larger than ${limit}`);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function toDownloadError(e: unknown, signal: AbortSignal): DownloadError {
  if (e instanceof DownloadError) return e;
  if (isBlockedAddressError(e)) {
    return new DownloadError('blocked_address', 'the URL resolves to a private or reserved address');
  }
  if (signal.aborted || errorCode(e) === 'UND_ERR_CONNECT_TIMEOUT') {
    return new DownloadError('timeout', 'the download timed out');
  }
  return new DownloadError('network', 'the URL could not be downloaded');
}

function errorCode(e: unknown): unknown {
  return typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
}
