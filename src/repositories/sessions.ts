import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { Team, UserRow } from '../db/types.ts';

export interface SessionUser {
  user: UserRow;
  tier: Team['tier'];
  team_name: string;
  created_at: Date;
  last_seen_at: Date;
}

export async function insertSession(db: Db, s: { id_digest: Buffer; user_id: string; expires_at: Date }): Promise<void> {
  await db.insertInto('sessions').values(s).execute();
}

/** A live session with its user and team, or nothing. */
export async function findLiveSession(db: Db, digest: Buffer): Promise<SessionUser | undefined> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .innerJoin('teams', 'teams.id', 'users.team_id')
    .selectAll('users')
    .select(['teams.tier', 'teams.name as team_name', 'sessions.created_at as session_created_at', 'sessions.last_seen_at'])
    .where('sessions.id_digest', '=', digest)
    .where('sessions.expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  if (!row) return undefined;
  const { tier, team_name, session_created_at, last_seen_at, ...user } = row;
  return { user, tier, team_name, created_at: session_created_at, last_seen_at };
}

export async function touchSession(db: Db, digest: Buffer, expiresAt: Date): Promise<void> {
  await db.updateTable('sessions').set({ last_seen_at: sql`now()`, expires_at: expiresAt }).where('id_digest', '=', digest).execute();
}

export async function deleteSession(db: Db, digest: Buffer): Promise<void> {
  await db.deleteFrom('sessions').where('id_digest', '=', digest).execute();
}

export async function deleteUserSessions(db: Db, userId: string): Promise<number> {
  const r = await db.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function insertSignInLink(
  db: Db,
  l: { token_digest: Buffer; user_id: string; purpose: 'sign_in' | 'invite'; created_by: string | null; expires_at: Date },
): Promise<void> {
  await db.insertInto('sign_in_links').values(l).execute();
}

/** Marks a live, unused link used and answers its user: a link opens one session, once. */
export async function useSignInLink(db: Db, digest: Buffer): Promise<string | undefined> {
  const row = await db
    .updateTable('sign_in_links')
    .set({ used_at: sql`now()` })
    .where('token_digest', '=', digest)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}

/** Failures in the window for this address and this client, and when the oldest of each leaves it. */
export async function countSignInFailures(
  db: Db,
  f: { email: string; ip: string; since: Date },
): Promise<{ email: number; ip: number; email_oldest: Date | null; ip_oldest: Date | null }> {
  const row = await sql<{ email: string; ip: string; email_oldest: Date | null; ip_oldest: Date | null }>`
    select
      count(*) filter (where email = ${f.email}) as email,
      count(*) filter (where ip = ${f.ip}) as ip,
      min(at) filter (where email = ${f.email}) as email_oldest,
      min(at) filter (where ip = ${f.ip}) as ip_oldest
    from sign_in_failures
    where (email = ${f.email} or ip = ${f.ip}) and at > ${f.since}`.execute(db);
  const r = row.rows[0]!;
  return { email: Number(r.email), ip: Number(r.ip), email_oldest: r.email_oldest, ip_oldest: r.ip_oldest };
}

/**
 * Takes a failure slot for this address and this client before the password (or link) is checked:
 * under transaction-scoped advisory locks on both, the window is counted and, when neither is full,
 * a failure row is written and its id answered; a right password deletes it again. Parallel guesses
 * are thus counted one after another, never all against the same count. Full: the oldest failure
 * that keeps it full, to say when to retry. An empty `email` counts against the client only.
 */
export async function reserveSignInFailure(
  db: Db,
  f: { email: string; ip: string; since: Date; perEmail: number; perIp: number },
): Promise<{ id: string } | { full: Date }> {
  return db.transaction().execute(async (trx) => {
    // Namespaces 1 (addresses) and 2 (clients); always in this order, so two never wait on each other in a cycle.
    if (f.email) await sql`select pg_advisory_xact_lock(1, hashtext(${f.email}))`.execute(trx);
    await sql`select pg_advisory_xact_lock(2, hashtext(${f.ip}))`.execute(trx);
    const n = await countSignInFailures(trx, f);
    const overEmail = f.email !== '' && n.email >= f.perEmail;
    const overIp = n.ip >= f.perIp;
    if (overEmail || overIp) {
      const oldest = [overEmail && n.email_oldest, overIp && n.ip_oldest].filter((d): d is Date => d instanceof Date);
      return { full: new Date(Math.min(...oldest.map((d) => d.getTime()))) };
    }
    const row = await trx.insertInto('sign_in_failures').values({ email: f.email, ip: f.ip }).returning('id').executeTakeFirstOrThrow();
    return { id: String(row.id) };
  });
}

/** A reserved slot that turned out not to be a failure. */
export async function releaseSignInFailure(db: Db, id: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('id', '=', id).execute();
}

/** A live, unused link's user, without using it: the cheap check before any password work. */
export async function findLiveSignInLink(db: Db, digest: Buffer): Promise<string | undefined> {
  const row = await db
    .selectFrom('sign_in_links')
    .select('user_id')
    .where('token_digest', '=', digest)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  return row?.user_id;
}

export async function forgetSignInFailures(db: Db, email: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('email', '=', email).execute();
}

/** Old sessions, links and failures: run by the maintenance job. */
export async function pruneSignInState(db: Db, failuresBefore: Date): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<', sql<Date>`now()`).execute();
  await db.deleteFrom('sign_in_links').where('expires_at', '<', sql<Date>`now() - interval '7 days'`).execute();
  await db.deleteFrom('sign_in_failures').where('at', '<', failuresBefore).execute();
}
