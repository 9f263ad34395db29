import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

// A callback that no submit claims within this long was for a job that is not ours to wait on.
const KEPT_FOR = '1 hour';

/** Keeps a provider's callback for a job whose submit is not recorded yet (and drops those long unclaimed). */
export async function recordEarlyHook(db: Db, provider: string, jobRef: string): Promise<void> {
  await db.deleteFrom('upstream_early_hooks').where('received_at', '<', sql<Date>`now() - ${KEPT_FOR}::interval`).execute();
  await db.insertInto('upstream_early_hooks').values({ provider, job_ref: jobRef }).onConflict((c) => c.doNothing()).execute();
}

/** Whether a callback came for any of these references of one job; each found is taken (removed). */
export async function takeEarlyHook(db: Db, provider: string, jobRefs: readonly string[]): Promise<boolean> {
  if (jobRefs.length === 0) return false;
  const taken = await db.deleteFrom('upstream_early_hooks').where('provider', '=', provider).where('job_ref', 'in', [...jobRefs]).returning('job_ref').execute();
  return taken.length > 0;
}
