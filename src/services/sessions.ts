import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { AppError } from '../domain/errors.ts';
import {
  csrfTokenFor,
  csrfTokenMatches,
  digestSecret,
  followLink,
  newSecret,
  SESSION_IDLE_MS,
  SESSION_MAX_MS,
  SESSION_TOUCH_MS,
  SIGN_IN_FAILURES,
  SIGN_IN_WINDOW_MS,
  signIn,
  type Role,
} from '../domain/dashboard-users.ts';
import { parseInput } from '../domain/validate.ts';
import type { Team } from '../db/types.ts';
import { settingOnce } from '../repositories/settings.ts';
import {
  deleteSession,
  deleteUserSessions,
  findLiveSession,
  findLiveSignInLink,
  forgetSignInFailures,
  insertSession,
  releaseSignInFailure,
  reserveSignInFailure,
  touchSession,
  useSignInLink,
} from '../repositories/sessions.ts';
import { findUserByEmail, findUserTeam, setPasswordHash } from '../repositories/users.ts';
import type { Deps } from './deps.ts';
import type { ClientInfo } from './principal.ts';
import { recordAudit } from './audit.ts';

// One message for every failed sign-in: it never tells which of the two was wrong.
const WRONG = 'Wrong email or password';
const LINK_GONE = 'This link has expired or was already used: ask your team owner for a new one';

export interface SessionView {
  user: { id: string; email: string; role: Role };
  team: { id: string; name: string; tier: Team['tier'] };
  csrf_token: string;
}

export interface OpenedSession extends SessionView {
  /** The cookie's value: known only to the browser; the database keeps its digest. */
  secret: string;
  expires_at: Date;
}

export interface DashboardPrincipal {
  teamId: string;
  userId: string;
  role: Role;
  tier: Team['tier'];
  /** Where the request came from, for the audit log. */
  client?: ClientInfo | undefined;
}

/**
 * The dashboard's door (DESIGN decision 17): passwords (argon2id), sessions behind an HttpOnly
 * cookie, one-time links, the CSRF token of each session, and a limit on failed sign-ins.
 */
export function createSessionService({ db }: Pick<Deps, 'db'>) {
  let csrfKey: Promise<string> | undefined;
  // Shared through the database, so a token from one node is good on every other.
  const csrfSecret = () => (csrfKey ??= settingOnce(db, 'csrf_secret', randomBytes(32).toString('hex')));
  // A verify against a real hash for unknown addresses, so timing does not tell who has an account.
  let decoy: Promise<string> | undefined;
  const decoyHash = () => (decoy ??= hash(randomBytes(16).toString('hex')));

  async function open(user: { id: string; email: string; role: Role; team_id: string }, team: { name: string; tier: Team['tier'] }, method: 'password' | 'link', client: ClientInfo): Promise<OpenedSession> {
    const secret = newSecret();
    const expires_at = new Date(Date.now() + SESSION_IDLE_MS);
    await db.transaction().execute(async (trx) => {
      await insertSession(trx, { id_digest: digestSecret(secret), user_id: user.id, expires_at });
      await recordAudit(trx, user.team_id, { kind: 'user', userId: user.id, client }, 'session.signed_in', { method });
    });
    return {
      secret,
      expires_at,
      user: { id: user.id, email: user.email, role: user.role },
      team: { id: user.team_id, name: team.name, tier: team.tier },
      csrf_token: csrfTokenFor(secret, await csrfSecret()),
    };
  }

  /**
   * A failure slot for this address (none for a link: '') and this client, taken before any
   * password work and released when the attempt succeeds: parallel guesses queue on it, so at most
   * SIGN_IN_FAILURES of them are ever checked in a window. Full: 429 with when to retry.
   */
  async function reserveFailure(email: string, ip: string): Promise<string> {
    const slot = await reserveSignInFailure(db, { email, ip, since: new Date(Date.now() - SIGN_IN_WINDOW_MS), ...SIGN_IN_FAILURES });
    if ('id' in slot) return slot.id;
    const retry = Math.max(1, Math.ceil((slot.full.getTime() + SIGN_IN_WINDOW_MS - Date.now()) / 1000));
    throw new AppError('rate_limited', `Too many failed sign-ins: try again in ${Math.ceil(retry / 60)} min`, { 'retry-after': String(retry) });
  }

  /** The cookie's session, its team and role; sliding expiry written at most hourly. */
async function authenticate(secret: string | undefined): Promise<(DashboardPrincipal & { view: SessionView }) | undefined> {
    if (!secret || secret.length > 100) return undefined;
    const digest = digestSecret(secret);
    const s = await findLiveSession(db, digest);
    if (!s) return undefined;
    const now = Date.now();
    if (now - s.last_seen_at.getTime() > SESSION_TOUCH_MS) {
      await touchSession(db, digest, new Date(Math.min(now + SESSION_IDLE_MS, s.created_at.getTime() + SESSION_MAX_MS)));
    }
    return {
      teamId: s.user.team_id,
      userId: s.user.id,
      role: s.user.role,
      tier: s.tier,
      view: {
        user: { id: s.user.id, email: s.user.email, role: s.user.role },
        team: { id: s.user.team_id, name: s.team_name, tier: s.tier },
        csrf_token: csrfTokenFor(secret, await csrfSecret()),
      },
    };
  }

  return {
    /** Email and password; every failure counts against the address and the client for 15 minutes. */
    async signIn(input: unknown, ip: string, userAgent?: string): Promise<OpenedSession> {
      const { email, password } = parseInput(signIn, input);
      // The slot is counted as a failure unless the password turns out right.
      const slot = await reserveFailure(email, ip);
      const user = await findUserByEmail(db, email);
      const ok = await verify(user?.password_hash ?? (await decoyHash()), password).catch(() => false);
      if (!user || !user.password_hash || !ok) throw new AppError('unauthorized', WRONG);
      await releaseSignInFailure(db, slot);
      await forgetSignInFailures(db, email);
      return open(user, await findUserTeam(db, user.id), 'password', { ip, user_agent: userAgent ?? null });
    },

    /** A one-time link (from `adforge user create` or an invitation): the password is chosen and a session opened. */
    async followLink(input: unknown, ip: string, userAgent?: string): Promise<OpenedSession> {
      const { token, password } = parseInput(followLink, input);
      // The token first, and a wrong one counts against the client as a failed sign-in does: a
      // flood of made-up tokens does no argon2 work and is soon refused.
      const slot = await reserveFailure('', ip);
      const digest = digestSecret(token);
      if (!(await findLiveSignInLink(db, digest))) throw new AppError('unauthorized', LINK_GONE);
      await releaseSignInFailure(db, slot);
      const passwordHash = await hash(password);
      const userId = await useSignInLink(db, digest);
      if (!userId) throw new AppError('unauthorized', LINK_GONE);
      const user = await setPasswordHash(db, userId, passwordHash);
      if (!user) throw new AppError('unauthorized', LINK_GONE);
      // A new password ends every other session of the user.
      await deleteUserSessions(db, user.id);
      return open(user, await findUserTeam(db, user.id), 'link', { ip, user_agent: userAgent ?? null });
    },

    authenticate,

    /**
     * A state-changing request of a session, wherever it arrives (GraphQL, /auth): a live session
     * and its CSRF token, else the 401 or 403 that says which is missing.
     */
    async requireSession(secret: string | undefined, csrfToken: string | undefined): Promise<DashboardPrincipal & { view: SessionView; secret: string }> {
      const session = await authenticate(secret);
      if (!session || !secret) throw new AppError('unauthorized', 'Your session has ended: sign in again');
      if (!csrfTokenMatches(secret, await csrfSecret(), csrfToken)) throw new AppError('forbidden', 'Missing or wrong CSRF token: reload the page');
      return { ...session, secret };
    },

    /** `who`: the session's person, for the audit line (the session was just checked, so it is theirs). */
    async signOut(secret: string, who?: { teamId: string; userId: string; client?: ClientInfo | undefined }): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await deleteSession(trx, digestSecret(secret));
        if (who) await recordAudit(trx, who.teamId, { kind: 'user', userId: who.userId, client: who.client }, 'session.signed_out', {});
      });
    },

    /** Every session of the user, on every device: the answer to a lost laptop. */
    signOutEverywhere: (userId: string, who?: { teamId: string; client?: ClientInfo | undefined }): Promise<number> =>
      db.transaction().execute(async (trx) => {
        const ended = await deleteUserSessions(trx, userId);
        if (who) await recordAudit(trx, who.teamId, { kind: 'user', userId, client: who.client }, 'session.signed_out', { everywhere: true, sessions_ended: ended });
        return ended;
      }),
  };

}
export type SessionService = ReturnType<typeof createSessionService>;
