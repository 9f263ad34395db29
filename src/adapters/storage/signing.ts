import { createHmac, timingSafeEqual } from 'node:crypto';

export type LinkCheck =
  | { ok: true; secondsLeft: number }
  | { ok: false; reason: 'expired' | 'invalid_signature' };

export interface SignedLinkParams {
  key: string;
  /** Unix seconds, as it arrives in the query string. */
  expires: string | number;
  signature: string;
}

const SIGNATURE_FORMAT = /^[0-9a-f]{64}$/;
// At most 12 plain digits, so Number(expires) is exact and junk is refused before any hashing.
const EXPIRES_FORMAT = /^[1-9][0-9]{0,11}$/;

export const nowInSeconds = (): number => Math.floor(Date.now() / 1000);

function hmacHex(key: string, expires: string, secret: string): string {
  // A newline cannot occur in a valid key, so key and expires cannot be shifted into each other.
  return createHmac('sha256', secret).update(`${key}\n${expires}`).digest('hex');
}

export function signLink(key: string, expiresAtSeconds: number, secret: string): string {
  if (!Number.isSafeInteger(expiresAtSeconds) || !EXPIRES_FORMAT.test(String(expiresAtSeconds))) {
    throw new RangeError('expires must be a positive whole number of unix seconds');
  }
  if (secret.length === 0) throw new RangeError('signing secret must not be empty');
  return hmacHex(key, String(expiresAtSeconds), secret);
}

/** Never throws on malformed input: anything that is not exactly what we signed is refused. */
export function verifyLink(params: SignedLinkParams, secret: string, now: number = nowInSeconds()): LinkCheck {
  const expires = String(params.expires);
  if (secret.length === 0 || !EXPIRES_FORMAT.test(expires) || !SIGNATURE_FORMAT.test(params.signature)) {
    return { ok: false, reason: 'invalid_signature' };
  }
  const expected = Buffer.from(hmacHex(params.key, expires, secret), 'hex');
  const given = Buffer.from(params.signature, 'hex');
  if (!timingSafeEqual(expected, given)) return { ok: false, reason: 'invalid_signature' };

  const secondsLeft = Number(expires) - now;
  if (secondsLeft <= 0) return { ok: false, reason: 'expired' };
  return { ok: true, secondsLeft };
}
