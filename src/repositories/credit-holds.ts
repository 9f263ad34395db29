import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

/** Credits a team has set aside now (holds not yet expired), other than the hold `except`. */
export async function heldCredits(db: Db, teamId: string, except: string): Promise<number> {
  const row = await db
    .selectFrom('credit_holds')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('credits'), eb.lit(0)).as('held'))
    .where('team_id', '=', teamId)
    .where('id', '!=', except)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirstOrThrow();
  return Number(row.held);
}

/** Sets credits aside under `id`, or renews that hold (a retry of the same request). */
export async function placeHold(db: Db, h: { id: string; team_id: string; credits: number; expires_at: Date }): Promise<void> {
  await db
    .insertInto('credit_holds')
    .values(h)
    .onConflict((oc) => oc.column('id').doUpdateSet({ credits: h.credits, expires_at: h.expires_at }))
    .execute();
}

export async function releaseHold(db: Db, id: string): Promise<void> {
  await db.deleteFrom('credit_holds').where('id', '=', id).execute();
}
