import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { request } from 'undici';
import type { AddressPolicy } from '../net/address-policy.ts';
import { createSafeDispatcher, isBlockedAddressError } from '../net/safe-dispatcher.ts';
import { signBody, STANDARD_WEBHOOK_HEADERS, standardWebhookSignature, WEBHOOK_HEADERS } from '../../domain/webhook-payload.ts';

export interface DeliverWebhookOptions {
  url: string;
  secret: string;
  /** The body, or its JSON text as recorded (a redelivery): the bytes we sign are the bytes we send. */
  body: object | string;
  /** Stable across re-sends of the same event, so receivers can drop duplicates. */
  eventId: string;
  allowPrivate: boolean;
  /** Budget for the whole attempt: DNS, connect, response headers and the body we read. */
  timeoutMs?: number;
  /** Replaces the rule derived from allowPrivate (tests: treat a loopback address as public). */
  policy?: AddressPolicy;
}

export interface WebhookDeliveryResult {
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  ok: boolean;
}

export const WEBHOOK_USER_AGENT = 'adforge-webhooks/1';
const DEFAULT_TIMEOUT_MS = 10_000;
/** We only look at the status; reading a little lets a small answer finish cleanly, reading more is a waste. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * One POST of a signed webhook. Never throws: a webhook is fire-and-forget for the service
 * (spec: single attempt, dropped if the receiver is down), so every failure becomes a result
 * the caller logs. Redirects are not followed: undici's `request` does not follow them, and a
 * receiver that moved must update its URL rather than have us re-send a signed body elsewhere.
 */
export async function deliverWebhook(opts: DeliverWebhookOptions): Promise<WebhookDeliveryResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const started = performance.now();
  const result = (statusCode: number | null, error: string | null): WebhookDeliveryResult => ({
    statusCode,
    latencyMs: Math.round(performance.now() - started),
    error,
    ok: error === null && statusCode !== null && statusCode >= 200 && statusCode <= 299,
  });

  const url = parseHttpUrl(opts.url);
  if (typeof url === 'string') return result(null, url);

  let raw: Buffer;
  let signature: string;
  let standardSignature: string;
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    raw = Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body), 'utf8');
    signature = signBody(raw, opts.secret);
    standardSignature = standardWebhookSignature(opts.eventId, timestamp, raw, opts.secret);
  } catch (e) {
    return result(null, e instanceof Error ? e.message : 'the body could not be signed');
  }

  const signal = AbortSignal.timeout(timeoutMs);
  const dispatcher = createSafeDispatcher({
    allowPrivate: opts.allowPrivate,
    connectTimeoutMs: timeoutMs,
    policy: opts.policy,
  });
  let statusCode: number | null = null;
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher,
      signal,
      body: raw,
      headers: {
        'content-type': 'application/json',
        [WEBHOOK_HEADERS.signature]: signature,
        [WEBHOOK_HEADERS.eventId]: opts.eventId,
        [WEBHOOK_HEADERS.timestamp]: String(timestamp),
        [STANDARD_WEBHOOK_HEADERS.id]: opts.eventId,
        [STANDARD_WEBHOOK_HEADERS.timestamp]: String(timestamp),
        [STANDARD_WEBHOOK_HEADERS.signature]: standardSignature,
        'user-agent': WEBHOOK_USER_AGENT,
      },
    });
    statusCode = res.statusCode;
    // Still under the same signal: a receiver that sends 200 and then stalls the body is a timeout.
    await readAtMostThenDiscard(res.body, MAX_RESPONSE_BYTES);
    if (statusCode >= 300 && statusCode <= 399) return result(statusCode, `HTTP ${statusCode}: redirects are not followed`);
    if (statusCode < 200 || statusCode > 299) return result(statusCode, `HTTP ${statusCode}`);
    return result(statusCode, null);
  } catch (e) {
    return result(statusCode, describeFailure(e, signal, timeoutMs));
  } finally {
    await dispatcher.destroy().catch(() => {});
  }
}

function parseHttpUrl(raw: string): URL | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'invalid webhook URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'only http and https webhook URLs are allowed';
  return url;
}

/**
 * Reads up to `limit` bytes, then drops the rest. The error listener goes on first: destroying
 * an unread undici body emits an AbortError, and unheard that would crash the process.
 */
async function readAtMostThenDiscard(body: Readable, limit: number): Promise<void> {
  body.on('error', () => {});
  let received = 0;
  try {
    for await (const chunk of body) {
      received += (chunk as Buffer).length;
      if (received >= limit) break;
    }
  } finally {
    body.destroy();
  }
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  UND_ERR_SOCKET: 'connection closed by the receiver',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed by the receiver',
};

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Short, log-friendly text; never the raw error, which can be long or name internals. */
function describeFailure(e: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (isBlockedAddressError(e)) return 'the webhook URL resolves to a private or reserved address';
  const code = errorCode(e);
  if (signal.aborted || (code !== undefined && TIMEOUT_CODES.has(code))) return `timed out after ${timeoutMs / 1000} s`;
  if (code === undefined) return 'network error';
  // undici refuses malformed request parts (say, a newline in the event id) before sending anything.
  if (code === 'UND_ERR_INVALID_ARG' && e instanceof Error) return `invalid request: ${e.message}`;
  const known = NETWORK_ERRORS[code];
  if (known !== undefined) return known;
  if (code.includes('CERT') || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL')) return `TLS error (${code})`;
  return `network error (${code})`;
}

/** The first error code found on the error, its causes, or (happy-eyeballs) its aggregated errors. */
function errorCode(e: unknown, depth = 0): string | undefined {
  if (depth > 5 || typeof e !== 'object' || e === null) return undefined;
  if ('code' in e && typeof e.code === 'string') return e.code;
  if ('cause' in e) {
    const inner = errorCode(e.cause, depth + 1);
    if (inner !== undefined) return inner;
  }
  if (e instanceof AggregateError) {
    for (const inner of e.errors) {
      const found = errorCode(inner, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
