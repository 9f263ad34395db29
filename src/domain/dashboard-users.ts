import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** The dashboard's people (DESIGN decision 17): a user belongs to one team with one role. */
export const ROLES = ['owner', 'member'] as const;
export type Role = (typeof ROLES)[number];

/** `__Host-`: browsers take it only Secure, from this host alone (no Domain) and on Path=/, so no sibling host plants or shadows it. */
export const SESSION_COOKIE = '__Host-adforge_session';
/** A session lives 14 days past its last use, and never more than 30 days after sign-in. */
export const SESSION_IDLE_MS = 14 * 24 * 3600_000;
export const SESSION_MAX_MS = 30 * 24 * 3600_000;
/** Sliding expiry is written at most this often, not at every request. */
export const SESSION_TOUCH_MS = 3600_000;
export const LINK_TTL_MS = { sign_in: 24 * 3600_000, invite: 7 * 24 * 3600_000 } as const;
/** Failed sign-ins allowed in the window: per address typed, and per client address. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const SIGN_IN_FAILURES = { perEmail: 5, perIp: 30 } as const;

export const email = z
  .string()
  .trim()
  .max(254, 'must be at most 254 characters')
  .pipe(z.email({ message: 'must be an email address' }))
  .transform((e) => e.toLowerCase());

// Length is what makes a password strong; NIST SP 800-63B asks for at least 8, we ask for 10.
export const password = z.string().min(10, 'must be at least 10 characters').max(200, 'must be at most 200 characters');

export const signIn = z.object({ email, password: z.string().min(1, 'is required').max(200, 'must be at most 200 characters') });
export const followLink = z.object({ token: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'is not a sign-in link'), password });
export const newUser = z.object({ email, role: z.enum(ROLES, { message: "must be 'owner' or 'member'" }) });

/** 32 random bytes, base64url: the value of a session cookie or of a one-time link. */
export const newSecret = (): string => randomBytes(32).toString('base64url');
export const digestSecret = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

/**
 * The CSRF token of a session: an HMAC of the session's secret, so it needs no storage and a page
 * of another site, which cannot read our answers, cannot know it.
 */
export function csrfTokenFor(sessionSecret: string, key: string): string {
  return createHmac('sha256', key).update(`csrf:${sessionSecret}`).digest('base64url');
}

export function csrfTokenMatches(sessionSecret: string, key: string, token: string | undefined): boolean {
  if (!token) return false;
  const want = Buffer.from(csrfTokenFor(sessionSecret, key));
  const got = Buffer.from(token);
  return want.length === got.length && timingSafeEqual(want, got);
}

/** What a role may do: members create and view; owners also manage keys, webhooks, members and credits. */
export const canManage = (role: Role): boolean => role === 'owner';
