import type { Db } from '../db/pool.ts';

/** Credits a team's owners added since `since` (the start of its billing period). */
export async function toppedUpSince(db: Db, teamId: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom('credit_top_ups')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('credits'), eb.lit(0)).as('total'))
    .where('team_id', '=', teamId)
    .where('at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/** Who added how many credits, kept beside the ledger line that names them. */
export async function recordTopUp(db: Db, t: { team_id: string; user_id: string; credits: number }): Promise<void> {
  await db.insertInto('credit_top_ups').values(t).execute();
}
