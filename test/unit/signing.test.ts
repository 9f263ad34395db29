import { describe, expect, it } from 'vitest';
import { signLink, verifyLink } from '../../src/adapters/storage/signing.ts';

const secret = 'test-signing-secret';
const key = 'products/2f1c9a54-6f1e-4a39-9b59-1f0d6c1e8a11.png';
const now = 1_800_000_000;

describe('signed links', () => {
  const expires = now + 60;
  const signature = signLink(key, expires, secret);

  it('accepts a fresh link and reports the seconds left', () => {
    expect(verifyLink({ key, expires, signature }, secret, now)).toEqual({ ok: true, secondsLeft: 60 });
    expect(verifyLink({ key, expires: String(expires), signature }, secret, now).ok).toBe(true);
  });

  it('refuses a link one second past its expiry, and at the expiry second itself', () => {
    expect(verifyLink({ key, expires, signature }, secret, expires + 1)).toEqual({ ok: false, reason: 'expired' });
    expect(verifyLink({ key, expires, signature }, secret, expires)).toEqual({ ok: false, reason: 'expired' });
    expect(verifyLink({ key, expires, signature }, secret, expires - 1)).toEqual({ ok: true, secondsLeft: 1 });
  });

  it('refuses a tampered key', () => {
    const result = verifyLink({ key: key.replace('.png', '.jpg'), expires, signature }, secret, now);
    expect(result).toEqual({ ok: false, reason: 'invalid_signature' });
  });

  it('refuses a tampered expiry, including other spellings of the same number', () => {
    for (const forged of [expires + 3600, `0${expires}`, `${expires}.0`, `+${expires}`, ` ${expires}`, '', 'soon']) {
      expect(verifyLink({ key, expires: forged, signature }, secret, now)).toEqual({ ok: false, reason: 'invalid_signature' });
    }
  });

  it('refuses a tampered signature or a different secret', () => {
    const flipped = (signature[0] === 'a' ? 'b' : 'a') + signature.slice(1);
    expect(verifyLink({ key, expires, signature: flipped }, secret, now).ok).toBe(false);
    expect(verifyLink({ key, expires, signature: signature.toUpperCase() }, secret, now).ok).toBe(false);
    expect(verifyLink({ key, expires, signature }, 'another-secret', now).ok).toBe(false);
  });

  it('refuses signatures of the wrong length or alphabet without throwing', () => {
    for (const bad of ['', 'ab', signature.slice(0, 62), `${signature}00`, `${signature.slice(0, 63)}z`, 'x'.repeat(64)]) {
      expect(() => verifyLink({ key, expires, signature: bad }, secret, now)).not.toThrow();
      expect(verifyLink({ key, expires, signature: bad }, secret, now)).toEqual({ ok: false, reason: 'invalid_signature' });
    }
  });

  it('refuses to sign a nonsensical expiry or with an empty secret', () => {
    expect(() => signLink(key, 1.5, secret)).toThrow(RangeError);
    expect(() => signLink(key, -1, secret)).toThrow(RangeError);
    expect(() => signLink(key, expires, '')).toThrow(RangeError);
  });
});
