import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const KEY_PREFIX = 'service_sk_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

/** 62^6 > 2^32, so a CRC-32 always fits six base62 digits. */
function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < BODY_LENGTH; i++) body += ALPHABET[randomInt(62)];
  return KEY_PREFIX + body + checksum(body);
}

/** A typo or a truncated paste is caught here, before any database lookup. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LENGTH);
  return checksum(body) === key.slice(KEY_PREFIX.length + BODY_LENGTH);
}

export function digestApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Enough to recognise a key in a list without revealing it. */
export function apiKeyHint(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 4)}…${key.slice(-4)}`;
}
