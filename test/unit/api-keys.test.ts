import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { apiKeyHint, digestApiKey, generateApiKey, isWellFormedApiKey, KEY_PREFIX } from '../../src/domain/api-keys.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_SHAPE = /^service_sk_[0-9A-Za-z]{32}[0-9A-Za-z]{6}$/;

const replaceAt = (s: string, i: number, c: string): string => s.slice(0, i) + c + s.slice(i + 1);

describe('generateApiKey', () => {
  it('uses the service_sk_ prefix', () => {
    expect(KEY_PREFIX).toBe('service_sk_');
    expect(generateApiKey().startsWith('service_sk_')).toBe(true);
  });

  it('produces service_sk_ + 32 base62 body characters + a 6-character base62 checksum (38 after the prefix)', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey();
      expect(key).toMatch(KEY_SHAPE);
      expect(key.length).toBe(KEY_PREFIX.length + 38);
    }
  });

  it('produces keys that pass isWellFormedApiKey', () => {
    for (let i = 0; i < 200; i++) expect(isWellFormedApiKey(generateApiKey())).toBe(true);
  });

  it('produces 1,000 distinct keys in 1,000 calls', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 1000; i++) keys.add(generateApiKey());
    expect(keys.size).toBe(1000);
  });

  it('draws body characters from the whole base62 alphabet (digits, upper and lower case)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) for (const c of generateApiKey().slice(KEY_PREFIX.length, KEY_PREFIX.length + 32)) seen.add(c);
    expect(seen.size).toBe(62);
  });
});

describe('isWellFormedApiKey', () => {
  it('detects every single-character substitution in the body and in the checksum, at every position', () => {
    for (let k = 0; k < 3; k++) {
      const key = generateApiKey();
      for (let i = KEY_PREFIX.length; i < key.length; i++) {
        for (const c of BASE62) {
          if (c === key[i]) continue;
          const mutated = replaceAt(key, i, c);
          expect(isWellFormedApiKey(mutated), `position ${i - KEY_PREFIX.length} changed to ${c} in ${key}`).toBe(false);
        }
      }
    }
  });

  it('detects two adjacent characters swapped in the body', () => {
    const key = generateApiKey();
    for (let i = KEY_PREFIX.length; i < KEY_PREFIX.length + 31; i++) {
      const a = key[i]!;
      const b = key[i + 1]!;
      if (a === b) continue;
      const swapped = key.slice(0, i) + b + a + key.slice(i + 2);
      expect(isWellFormedApiKey(swapped), `swap at ${i - KEY_PREFIX.length}`).toBe(false);
    }
  });

  it('refuses the empty string', () => {
    expect(isWellFormedApiKey('')).toBe(false);
  });

  it('refuses the prefix alone', () => {
    expect(isWellFormedApiKey(KEY_PREFIX)).toBe(false);
  });

  it('refuses a valid body and checksum behind a wrong prefix', () => {
    const rest = generateApiKey().slice(KEY_PREFIX.length);
    for (const prefix of ['', 'service_pk_', 'SERVICE_SK_', 'service-sk-', 'sk_', 'service_sk', 'xservice_sk_', ' service_sk_']) {
      expect(isWellFormedApiKey(prefix + rest), JSON.stringify(prefix)).toBe(false);
    }
  });

  it('refuses a key one character too short or too long', () => {
    const key = generateApiKey();
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey(key.slice(0, KEY_PREFIX.length) + key.slice(KEY_PREFIX.length + 1))).toBe(false);
    for (const c of ['0', 'a', 'Z']) {
      expect(isWellFormedApiKey(key + c)).toBe(false);
      expect(isWellFormedApiKey(KEY_PREFIX + c + key.slice(KEY_PREFIX.length))).toBe(false);
    }
  });

  it('refuses a truncated paste (body only, no checksum)', () => {
    const key = generateApiKey();
    expect(isWellFormedApiKey(key.slice(0, KEY_PREFIX.length + 32))).toBe(false);
  });

  it('refuses non-base62 characters anywhere after the prefix', () => {
    const key = generateApiKey();
    for (const bad of ['-', '_', '+', '/', '=', ' ', '.', 'é', 'Ａ', '\n', '\0']) {
      for (const i of [KEY_PREFIX.length, KEY_PREFIX.length + 16, KEY_PREFIX.length + 32, key.length - 1]) {
        expect(isWellFormedApiKey(replaceAt(key, i, bad)), `${JSON.stringify(bad)} at ${i}`).toBe(false);
      }
    }
  });

  it('refuses surrounding whitespace and a trailing newline', () => {
    const key = generateApiKey();
    for (const padded of [` ${key}`, `${key} `, `${key}\n`, `${key}\r\n`, `\t${key}`]) {
      expect(isWellFormedApiKey(padded), JSON.stringify(padded)).toBe(false);
    }
  });

  it('refuses a correctly shaped key whose checksum does not match its body', () => {
    const a = generateApiKey();
    let b = generateApiKey();
    while (b.slice(-6) === a.slice(-6)) b = generateApiKey();
    expect(isWellFormedApiKey(a.slice(0, -6) + b.slice(-6))).toBe(false);
  });
});

describe('digestApiKey', () => {
  it('is the 32-byte SHA-256 of the key text', () => {
    const key = generateApiKey();
    const digest = digestApiKey(key);
    expect(Buffer.isBuffer(digest)).toBe(true);
    expect(digest.length).toBe(32);
    expect(digest.equals(createHash('sha256').update(key, 'utf8').digest())).toBe(true);
  });

  it('matches a known SHA-256 test vector', () => {
    expect(digestApiKey('abc').toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('is deterministic and differs between keys', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(digestApiKey(a).equals(digestApiKey(a))).toBe(true);
    expect(digestApiKey(a).equals(digestApiKey(b))).toBe(false);
  });
});

describe('apiKeyHint', () => {
  it('shows the prefix, the first 4 and the last 4 characters after it, and nothing else', () => {
    const key = generateApiKey();
    const rest = key.slice(KEY_PREFIX.length);
    expect(apiKeyHint(key)).toBe(`${KEY_PREFIX}${rest.slice(0, 4)}…${rest.slice(-4)}`);
  });

  it('never contains the secret body, nor any 5 consecutive characters of the part after the prefix', () => {
    for (let k = 0; k < 100; k++) {
      const key = generateApiKey();
      const rest = key.slice(KEY_PREFIX.length);
      const hint = apiKeyHint(key);
      expect(hint).not.toContain(rest.slice(0, 32));
      expect(hint).not.toContain(rest);
      const revealed = hint.slice(KEY_PREFIX.length).replace('…', '');
      expect(revealed.length).toBe(8);
      for (let i = 0; i + 5 <= rest.length; i++) {
        expect(hint.slice(KEY_PREFIX.length), `window at ${i}`).not.toContain(rest.slice(i, i + 5));
      }
    }
  });

  it('is not itself a usable key', () => {
    const key = generateApiKey();
    expect(isWellFormedApiKey(apiKeyHint(key))).toBe(false);
  });
});
