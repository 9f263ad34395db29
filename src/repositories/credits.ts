import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

/**
 * Takes `amount` credits if the team has them, in one statement: the row lock it takes is what
 * keeps concurrent creates of one team from spending more than the limit together.
 */
export async function debitCredits(
  db: Db,
  teamId: string,
  amount: number,
): Promise<{ ok: true } | { ok: false; available: number }> {
  const row = await db
    .updateTable('teams')
    .set({ credits_used: sql`credits_used + ${amount}` })
    .where('id', '=', teamId)
    .where(sql<boolean>`credits_used + ${amount} <= credits_limit`)
    .returning('id')
    .executeTakeFirst();
  if (row) return { ok: true };
  return { ok: false, available: await availableCredits(db, teamId) };
}

/** What the team can still spend this period (never below zero). */
export async function availableCredits(db: Db, teamId: string): Promise<number> {
  const team = await db
    .selectFrom('teams')
    .select(sql<number>`credits_limit - credits_used`.as('available'))
    .where('id', '=', teamId)
    .executeTakeFirst();
  return Math.max(0, Number(team?.available ?? 0));
}

/** Gives credits back; never below zero, in case a new billing period started in between. */
export async function refundCredits(db: Db, teamId: string, amount: number): Promise<void> {
  await db
    .updateTable('teams')
    .set({ credits_used: sql`greatest(credits_used - ${amount}, 0)` })
    .where('id', '=', teamId)
    .execute();
}
