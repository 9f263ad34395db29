import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { Team } from '../db/types.ts';

// A deleted team (teams.deleted_at, a tombstone for the accounts) is absent for every service path:
// its keys, sessions and creates all find no team.
const notDeleted = sql<boolean>`deleted_at is null`;

export async function insertTeam(db: Db, t: { name: string; tier: Team['tier']; credits_limit: number }): Promise<Team> {
  return db.insertInto('teams').values(t).returningAll().executeTakeFirstOrThrow();
}

export async function findTeam(db: Db, id: string): Promise<Team | undefined> {
  return db.selectFrom('teams').selectAll().where('id', '=', id).where(notDeleted).executeTakeFirst();
}

export async function setCreditsLimit(db: Db, id: string, limit: number): Promise<Team | undefined> {
  return db.updateTable('teams').set({ credits_limit: limit }).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function lockTeam(db: Db, id: string): Promise<Team | undefined> {
  return db.selectFrom('teams').selectAll().where('id', '=', id).where(notDeleted).forUpdate().executeTakeFirst();
}

/** A new billing period: usage starts again from zero. */
export async function resetPeriod(db: Db, id: string): Promise<Team | undefined> {
  return db
    .updateTable('teams')
    .set({ credits_used: 0, period_started_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}
