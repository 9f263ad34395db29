import { FormData as UndiciFormData, request, type Dispatcher } from 'undici';
import type { Span } from '@opentelemetry/api';
import { inSpan, SpanKind } from '../../observability/tracing.ts';
import type { Readable } from 'node:stream';
import { limitedStream } from '../net/byte-limit.ts';
import { DownloadError } from '../net/download.ts';
import { neverSent } from '../net/never-sent.ts';
import { readAtMost } from '../net/read-at-most.ts';
import { retryAfterMs } from '../net/retry-after.ts';
import { createSafeDispatcher, isBlockedAddressError } from '../net/safe-dispatcher.ts';
import { UpstreamError } from './engine-contract.ts';

/**
 * A provider's HTTP error answer as an UpstreamError, the same way for every adapter: 401/403 the
 * key, 429 a wait (Retry-After), a 5xx to a submit an unknown outcome (unless the provider says
 * that status queued nothing), other 5xx a retry, the rest the provider's refusal with its message.
 */
function httpFailure(o: {
  provider: string;
  status: number;
  retryAfter: string | string[] | undefined;
  /** A wait the provider gives in its error body instead of a Retry-After header (ms). */
  bodyRetryAfterMs?: number | undefined;
  message: string | undefined;
  submit: boolean;
  /** Statuses that provably created nothing, even to a submit (the provider's own client resends on them). */
  safeToResend?: ReadonlySet<number>;
  /** A provider that refuses a key with another status (Google: 400 API_KEY_INVALID) says so here. */
  keyRefused?: boolean;
  /** 4xx statuses that, to a submit, do not prove nothing was created (a timeout, a conflict): its outcome is unknown. */
  unknownOutcome?: ReadonlySet<number>;
  /** The provider says the first request under this idempotency key is still running (HeyGen's 409). */
  inProgress?: boolean;
}): UpstreamError {
  const { provider, status } = o;
  if (status === 401 || status === 403 || o.keyRefused) return new UpstreamError('auth', `${provider} refused the service credentials`);
  if (o.inProgress) return new UpstreamError('in_progress', `${provider} is still working on the first request under this idempotency key`, { retryAfterMs: retryAfterMs(o.retryAfter) ?? o.bodyRetryAfterMs });
  if (status === 429) return new UpstreamError('rate_limited', `${provider} is rate limiting`, { retryAfterMs: retryAfterMs(o.retryAfter) ?? o.bodyRetryAfterMs });
  if (o.safeToResend?.has(status)) return new UpstreamError('transient', `${provider} answered ${status}`);
  if (o.submit && o.unknownOutcome?.has(status)) return new UpstreamError('unsent_unknown', `${provider} answered ${status} to the submit`);
  if (status >= 500) return new UpstreamError(o.submit ? 'unsent_unknown' : 'transient', `${provider} answered ${status}${o.submit ? ' to the submit' : ''}`);
  return new UpstreamError('refused', `${provider} refused the request: ${o.message ?? `it answered ${status}`}`);
}

/**
 * A provider's HTTP error answer, read as every adapter reads it (`failure`), with the answer itself:
 * for an adapter whose provider says more in its error body than the status does (sync's
 * IDEMPOTENCY_* codes, say).
 */
export class ProviderAnswerError extends UpstreamError {
  readonly status: number;
  /** The error body as JSON; undefined when it was not JSON. */
  readonly body: unknown;
  /** The answer's headers (who answered: fal's own server names its request id). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  constructor(read: UpstreamError, status: number, body: unknown, headers: Readonly<Record<string, string | string[] | undefined>> = {}) {
    super(read.failure, read.message, { ...(read.retryAfterMs !== undefined ? { retryAfterMs: read.retryAfterMs } : {}) });
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/** A request that got no answer: before anything was sent it is simply retried; after, a submit's outcome is unknown. */
function networkFailure(provider: string, e: unknown, submit: boolean): UpstreamError {
  return new UpstreamError(submit && !neverSent(e) ? 'unsent_unknown' : 'transient', `${provider} could not be reached`, { cause: e });
}

/** How a provider's error answers are read: one client's settings, passed on to each of its calls (see httpFailure). */
interface ErrorReading {
  /** The provider's error text in its error JSON. */
  message: (json: unknown) => string | undefined;
  /** Statuses that provably created nothing, even to a submit. */
  safeToResend?: ReadonlySet<number>;
  /** 4xx statuses that leave a submit's outcome unknown (a timeout, a conflict). */
  unknownOutcome?: ReadonlySet<number>;
  /** The key was refused, told by an answer other than 401/403 (Google answers a bad key 400 API_KEY_INVALID). */
  keyRefused?: (status: number, json: unknown) => boolean;
  /** The wait (ms) a provider gives in its 429 body instead of a Retry-After header (Submagic's `retryAfter`). */
  retryAfterInBody?: (json: unknown) => number | undefined;
  /**
   * The answer says the first request under the idempotency key this request carries is still
   * running (HeyGen's 409 request_in_progress, sync.so's IDEMPOTENCY_* codes): asked only of a
   * request that carries a key. A fresh key would make a second job; the same key, later, gets
   * the original's answer.
   */
  inProgress?: (status: number, json: unknown) => boolean;
}

interface ProviderCall extends ErrorReading {
  provider: string;
  dispatcher: Dispatcher;
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  /** The provider's auth header (and any other); JSON content type is added for a body that is not a form. */
  headers: Record<string, string>;
  /** JSON, or a FormData sent as multipart (its boundary set by undici). */
  body?: unknown;
  signal: AbortSignal;
  timeoutMs: number;
  maxBytes: number;
  /** A submit: an answer lost after sending leaves its outcome unknown. */
  submit?: boolean;
  /** The answer is media, not JSON. */
  binary?: boolean;
  /** A 2xx answer's body is handed back as it arrives (`body`), counted against maxBytes, never read whole. */
  stream?: boolean;
  /** A 3xx with a Location is handed back (`redirect`) rather than thrown: the caller decides how to follow it. */
  handBackRedirect?: boolean;
  /** The request carries an idempotency key (an `idempotency-key` header): the provider may answer that its first request is still running. */
  idempotencyKey?: boolean;
}

/**
 * One request to a provider, answered 2xx (its bytes, and its JSON unless binary) or thrown as an
 * UpstreamError: the same size cap, error mapping and parse for every adapter.
 */
async function callProvider(c: ProviderCall): Promise<ProviderAnswer> {
  const url = new URL(c.url);
  const attributes = { 'adforge.provider': c.provider, 'http.request.method': c.method, 'server.address': url.host, 'url.path': url.pathname };
  return inSpan(`${c.provider} ${c.method}`, attributes, (span) => callProviderTraced(c, span), { kind: SpanKind.CLIENT });
}

/** A 2xx answer, or (only when asked for) the address a 3xx sends the caller to. */
export interface ProviderAnswer {
  raw: Buffer;
  json: unknown;
  /** The Location of a 3xx, as sent (maybe relative): only with `handBackRedirect`. */
  redirect?: string;
  /**
   * A 2xx answer's body as it arrives, only with `stream` (`raw` is then empty): past maxBytes it
   * fails with the provider's refusal (too much data), cut short with a DownloadError (a passing
   * failure: the result can be asked for again).
   */
  body?: Readable;
}

async function callProviderTraced(c: ProviderCall, span: Span): Promise<ProviderAnswer> {
  let res: Dispatcher.ResponseData;
  // A form holding a file from disk goes as undici streams it (its length known from the file's size).
  const payload = c.body instanceof StreamedForm ? { bytes: c.body.form, type: undefined } : await encodeBody(c.body);
  try {
    res = await request(c.url, {
      method: c.method,
      dispatcher: c.dispatcher,
      signal: AbortSignal.any([c.signal, AbortSignal.timeout(c.timeoutMs)]),
      headers: { ...c.headers, ...(payload?.type ? { 'content-type': payload.type } : {}) },
      ...(payload ? { body: payload.bytes } : {}),
    });
  } catch (e) {
    if (isBlockedAddressError(e)) throw new UpstreamError('auth', `the ${c.provider} address is not allowed`, { cause: e });
    throw networkFailure(c.provider, e, Boolean(c.submit));
  }
  const location = res.headers.location;
  if (c.handBackRedirect && res.statusCode >= 300 && res.statusCode < 400 && location) {
    span.setAttribute('http.response.status_code', res.statusCode);
    await res.body.dump().catch(() => {});
    return { raw: Buffer.alloc(0), json: undefined, redirect: Array.isArray(location) ? location[0]! : location };
  }
  if (c.stream && res.statusCode >= 200 && res.statusCode < 300) {
    span.setAttribute('http.response.status_code', res.statusCode);
    return { raw: Buffer.alloc(0), json: undefined, body: streamedBody(c, res.body) };
  }
  const raw = await readAtMost(res.body, c.maxBytes, () => new UpstreamError('refused', `${c.provider} answered with too much data`)).catch((e: unknown) => {
    throw e instanceof UpstreamError ? e : new UpstreamError(c.submit ? 'unsent_unknown' : 'transient', `the ${c.provider} answer was cut off`, { cause: e });
  });
  span.setAttribute('http.response.status_code', res.statusCode);
  const ok = res.statusCode >= 200 && res.statusCode < 300;
  const json = ok && c.binary ? undefined : parseJson(raw);
  if (ok) return { raw, json };
  const read = httpFailure({
    provider: c.provider,
    status: res.statusCode,
    retryAfter: res.headers['retry-after'],
    message: c.message(json),
    submit: Boolean(c.submit),
    ...(c.safeToResend ? { safeToResend: c.safeToResend } : {}),
    ...(c.unknownOutcome ? { unknownOutcome: c.unknownOutcome } : {}),
    ...(c.keyRefused?.(res.statusCode, json) ? { keyRefused: true } : {}),
    ...(c.idempotencyKey && c.inProgress?.(res.statusCode, json) ? { inProgress: true } : {}),
    bodyRetryAfterMs: c.retryAfterInBody?.(json),
  });
  throw new ProviderAnswerError(read, res.statusCode, json, res.headers);
}

/** A streamed answer: past maxBytes the provider's refusal, cut short a failed download (asked for again). */
function streamedBody(c: ProviderCall, body: Readable): Readable {
  const tooMuch = () => new UpstreamError('refused', `${c.provider} answered with too much data`);
  return limitedStream(body, c.maxBytes, tooMuch, (e) => (e instanceof UpstreamError ? e : new DownloadError('network', `the ${c.provider} answer was cut off`)));
}

/**
 * A multipart form sent as it is read, not encoded whole first: for a file part too large to hold
 * (a Blob backed by a file on disk, fs.openAsBlob). Built on undici's own FormData, the one its
 * request() recognises (the runtime's global FormData is another class to it). Such a request is
 * never resent as it was.
 */
export class StreamedForm {
  readonly form = new UndiciFormData();
  constructor(fields: Record<string, string>, file: { name: string; blob: Blob; filename: string }) {
    for (const [k, v] of Object.entries(fields)) this.form.append(k, v);
    this.form.append(file.name, file.blob, file.filename);
  }
}

/**
 * JSON, or a form encoded as multipart by the runtime's own encoder (Node's fetch): the bytes and
 * their boundary are fixed before sending, so a retry sends exactly the same request.
 */
async function encodeBody(body: unknown): Promise<{ bytes: Buffer; type: string } | undefined> {
  if (body === undefined) return undefined;
  if (!(body instanceof FormData)) return { bytes: Buffer.from(JSON.stringify(body)), type: 'application/json' };
  const encoded = new Response(body);
  return { bytes: Buffer.from(await encoded.arrayBuffer()), type: encoded.headers.get('content-type') ?? 'multipart/form-data' };
}

function parseJson(raw: Buffer): unknown {
  try {
    return raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
  } catch {
    return undefined;
  }
}

/** `{error: {message}}`, the error body of OpenAI and Google APIs. */
export function errorMessage(json: unknown): string | undefined {
  const m = (json as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof m === 'string' ? m.slice(0, 500) : undefined;
}

/** `{message}` or `{error: "..."}`, the error body of sync.so and Submagic. */
export function messageOrError(json: unknown): string | undefined {
  const j = json as { message?: unknown; error?: unknown } | undefined;
  const m = typeof j?.message === 'string' ? j.message : j?.error;
  return typeof m === 'string' ? m.slice(0, 500) : undefined;
}

export interface ProviderClientOptions extends ErrorReading {
  provider: string;
  /** Where a path (a URL starting with `/`) is sent: the provider's API root, trailing slashes dropped. */
  baseUrl?: string;
  allowPrivate: boolean;
  /** The auth header (and any other) every request carries. */
  headers: Record<string, string>;
  timeoutMs: number;
  /** A cap on every call's timeout, its own or the client's (UPSTREAM_CALL_TIMEOUT_SECONDS). */
  callTimeoutCapMs?: number | undefined;
  /** The cap of a JSON answer. */
  maxBytes: number;
  /** The cap of a media answer (`binary`). */
  maxBinaryBytes?: number;
}

export type ProviderRequest = (
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  body: unknown,
  signal: AbortSignal,
  o?: {
    submit?: boolean;
    binary?: boolean;
    stream?: boolean;
    headers?: Record<string, string>;
    handBackRedirect?: boolean;
    /** This call's own time limit, over the client's: a provider's documents give reads, writes and uploads different ones. */
    timeoutMs?: number;
  },
) => Promise<ProviderAnswer>;

/**
 * One provider's connection settings, set once: its API root, SSRF-safe dispatcher, auth header,
 * caps and error reading; `call` is callProvider with them filled in, `json` its answer as a JSON
 * object (undefined when the answer is not one).
 */
export function createProviderClient(o: ProviderClientOptions): {
  dispatcher: Dispatcher;
  call: ProviderRequest;
  json: (...args: Parameters<ProviderRequest>) => Promise<Record<string, unknown> | undefined>;
} {
  // undici gives up on headers after 5 minutes unless told otherwise: never before the client's own timeout.
  const dispatcher = createSafeDispatcher({ allowPrivate: o.allowPrivate, connectTimeoutMs: 10_000, headersTimeoutMs: Math.max(o.timeoutMs, 300_000) });
  const base = (o.baseUrl ?? '').replace(/\/+$/, '');
  const call: ProviderRequest = (method, url, body, signal, x = {}) =>
    callProvider({
      provider: o.provider,
      dispatcher,
      method,
      url: url.startsWith('/') ? `${base}${url}` : url,
      headers: { ...o.headers, ...x.headers },
      body,
      signal,
      // A call's own timeout (its provider's documents for that call), else the client's; never past the operator's cap.
      timeoutMs: Math.min(x.timeoutMs ?? o.timeoutMs, o.callTimeoutCapMs ?? Infinity),
      maxBytes: x.binary ? (o.maxBinaryBytes ?? o.maxBytes) : o.maxBytes,
      message: o.message,
      ...(o.safeToResend ? { safeToResend: o.safeToResend } : {}),
      ...(o.unknownOutcome ? { unknownOutcome: o.unknownOutcome } : {}),
      ...(o.keyRefused ? { keyRefused: o.keyRefused } : {}),
      ...(o.retryAfterInBody ? { retryAfterInBody: o.retryAfterInBody } : {}),
      ...(o.inProgress ? { inProgress: o.inProgress } : {}),
      ...(Object.keys(x.headers ?? {}).some((h) => h.toLowerCase() === 'idempotency-key') ? { idempotencyKey: true } : {}),
      ...(x.submit ? { submit: true } : {}),
      ...(x.binary ? { binary: true } : {}),
      ...(x.stream ? { stream: true } : {}),
      ...(x.handBackRedirect ? { handBackRedirect: true } : {}),
    });
  return {
    dispatcher,
    call,
    json: async (...args) => {
      const { json } = await call(...args);
      return json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
    },
  };
}
