import { describe, expect, it } from 'vitest';
import { canManage, csrfTokenFor, csrfTokenMatches, digestSecret, email, followLink, newSecret, newUser, password, signIn } from '../../src/domain/dashboard-users.ts';
import { parseInput } from '../../src/domain/validate.ts';

const refusal = (schema: Parameters<typeof parseInput>[0], input: unknown) => {
  try {
    parseInput(schema, input);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('accepted');
};

describe('dashboard users: the rules', () => {
  it('an email is trimmed and lower-cased; anything else is refused naming the field', () => {
    expect(email.parse('  Ann.Lee@Example.COM ')).toBe('ann.lee@example.com');
    expect(refusal(newUser, { email: 'ann', role: 'owner' })).toBe('email: must be an email address');
    expect(refusal(newUser, { email: `${'a'.repeat(250)}@x.io`, role: 'owner' })).toBe('email: must be at most 254 characters');
    expect(refusal(newUser, { email: 'a@b.io', role: 'admin' })).toBe("role: must be 'owner' or 'member'");
    expect(refusal(newUser, { email: 'a\u0000@b.io', role: 'owner' })).toMatch(/^email: must not contain NUL/);
  });

  it('a new password is 10 to 200 characters; sign-in takes whatever was typed, up to 200', () => {
    expect(password.safeParse('123456789').success).toBe(false);
    expect(password.safeParse('1234567890').success).toBe(true);
    expect(password.safeParse('x'.repeat(201)).success).toBe(false);
    expect(signIn.safeParse({ email: 'a@b.io', password: 'short' }).success).toBe(true);
    expect(refusal(signIn, { email: 'a@b.io', password: '' })).toBe('password: is required');
  });

  it('a link token is 43 base64url characters', () => {
    const token = newSecret();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(followLink.safeParse({ token, password: 'long enough!' }).success).toBe(true);
    expect(refusal(followLink, { token: `${token}=`, password: 'long enough!' })).toBe('token: is not a sign-in link');
  });

  it('secrets are random and stored as a 32-byte digest', () => {
    const a = newSecret();
    expect(a).not.toBe(newSecret());
    expect(digestSecret(a)).toHaveLength(32);
    expect(digestSecret(a).equals(digestSecret(a))).toBe(true);
  });

  it("a CSRF token is bound to its session and the server's key", () => {
    const s = newSecret();
    const t = csrfTokenFor(s, 'k1');
    expect(csrfTokenMatches(s, 'k1', t)).toBe(true);
    expect(csrfTokenMatches(newSecret(), 'k1', t)).toBe(false);
    expect(csrfTokenMatches(s, 'k2', t)).toBe(false);
    expect(csrfTokenMatches(s, 'k1', undefined)).toBe(false);
    expect(csrfTokenMatches(s, 'k1', t.slice(1))).toBe(false);
  });

  it('owners manage; members do not', () => {
    expect(canManage('owner')).toBe(true);
    expect(canManage('member')).toBe(false);
  });
});
