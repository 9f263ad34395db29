import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { Team } from '../db/types.ts';

export async function insertTeam(db: Db, t: { name: string; tier: Team['tier']; credits_limit: number }): Promise<Team> {
  return db.insertInto('teams').values(t).returningAll().executeTakeFirstOrThrow();
}

export async function findTeam(db: Db, id: string): Promise<Team | undefined> {
  return db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function setCreditsLimit(db: Db, id: string, limit: number): Promise<Team | undefined> {
  return db.updateTable('teams').set({ credits_limit: limit }).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function lockTeam(db: Db, id: string): Promise<Team | undefined> {
  return db.selectFrom('teams').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
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
