import { createHmac, timingSafeEqual } from 'node:crypto';
import type { GenerationType } from './generation-types.ts';

/** Header names as sent (HTTP header names are case-insensitive; node:http lowercases them). */
export const WEBHOOK_HEADERS = {
  signature: 'X-Service-Signature',
  eventId: 'X-Service-Event-Id',
  timestamp: 'X-Service-Timestamp',
} as const;

/** Standard Webhooks (standardwebhooks.com) headers, sent beside ours so its libraries can verify. */
export const STANDARD_WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

export interface GenerationCompletedBody {
  event: 'generation.completed';
  generation_id: string;
  type: GenerationType;
  status: 'completed';
  created_at: string;
  completed_at: string;
  result_url: string;
}

export interface GenerationFailedBody {
  event: 'generation.failed';
  generation_id: string;
  type: GenerationType;
  status: 'failed';
  created_at: string;
  completed_at: string;
  error_message: string;
}

export type WebhookBody = GenerationCompletedBody | GenerationFailedBody;

export interface FinishedGeneration {
  id: string;
  type: GenerationType;
  status: 'completed' | 'failed';
  created_at: Date;
  completed_at: Date;
  result_url?: string | null;
  error?: string | null;
}

/** Said when a failed generation carries no message: the spec makes `error_message` a string, never null. */
export const FALLBACK_ERROR_MESSAGE = 'generation failed';

/**
 * The exact body the spec lists, built field by field so nothing else from the row can leak
 * into it, in the spec's key order (receivers that log or diff bodies see a stable shape).
 * A completed generation without a result URL is a bug upstream: we cannot invent a URL, so
 * it throws rather than send a body that breaks the contract.
 */
export function webhookBody(generation: FinishedGeneration): WebhookBody {
  const created_at = generation.created_at.toISOString();
  const completed_at = generation.completed_at.toISOString();
  if (generation.status === 'completed') {
    if (typeof generation.result_url !== 'string' || generation.result_url === '') {
      throw new TypeError(`completed generation ${generation.id} has no result_url`);
    }
    return {
      event: 'generation.completed',
      generation_id: generation.id,
      type: generation.type,
      status: 'completed',
      created_at,
      completed_at,
      result_url: generation.result_url,
    };
  }
  return {
    event: 'generation.failed',
    generation_id: generation.id,
    type: generation.type,
    status: 'failed',
    created_at,
    completed_at,
    error_message: generation.error || FALLBACK_ERROR_MESSAGE,
  };
}

/**
 * Lowercase hex HMAC-SHA256 of the raw bytes, keyed with the webhook secret. An empty secret
 * would make signatures anyone can forge, so it is refused.
 */
export function signBody(rawBody: string | Buffer, secret: string): string {
  if (secret.length === 0) throw new RangeError('webhook secret must not be empty');
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

const SIGNATURE_FORMAT = /^[0-9a-fA-F]{64}$/;

/**
 * The receiver's check, in constant time. Takes a header value as node:http hands it over
 * (possibly missing or repeated) and never throws: anything but one well-formed signature of
 * exactly these bytes is false.
 */
export function verifySignature(
  rawBody: string | Buffer,
  secret: string,
  signatureHex: string | string[] | undefined,
): boolean {
  if (typeof signatureHex !== 'string' || !SIGNATURE_FORMAT.test(signatureHex)) return false;
  if (typeof secret !== 'string' || secret.length === 0) return false;
  if (typeof rawBody !== 'string' && !Buffer.isBuffer(rawBody)) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const given = Buffer.from(signatureHex, 'hex');
  // The format check fixes the length at 32 bytes; the comparison re-checks because
  // timingSafeEqual throws on a length mismatch.
  return given.length === expected.length && timingSafeEqual(expected, given);
}

/**
 * The Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`, keyed
 * with the secret's bytes (the part after `whsec_`, base64). The same secret as ours, so a receiver
 * holding it can verify either header.
 */
export function standardWebhookSignature(id: string, timestamp: number, rawBody: string | Buffer, secret: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  if (key.length === 0) throw new RangeError('webhook secret must not be empty');
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody, 'utf8')]);
  return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
}
