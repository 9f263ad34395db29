import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

/**
 * A worker killed mid-job leaves its jobs locked (graphile-worker waits 4 hours before it takes
 * them back). Every live worker says so every few seconds; jobs locked by a worker that has gone
 * quiet are unlocked, so another worker picks them up and the generation still ends.
 */
export async function beat(db: Db, workerIds: Iterable<string>): Promise<void> {
  const ids = [...workerIds];
  if (!ids.length) return;
  await db
    .insertInto('worker_heartbeats')
    .values(ids.map((worker_id) => ({ worker_id })))
    .onConflict((oc) => oc.column('worker_id').doUpdateSet({ seen_at: sql`now()` }))
    .execute();
}

export async function unlockJobsOfDeadWorkers(db: Db, ownIds: Iterable<string>, staleAfterSeconds: number): Promise<string[]> {
  const own = [...ownIds];
  const { rows } = await sql<{ locked_by: string }>`
    select distinct j.locked_by
    from graphile_worker._private_jobs j
    left join worker_heartbeats h on h.worker_id = j.locked_by
    where j.locked_by is not null
      and j.locked_at < now() - make_interval(secs => ${staleAfterSeconds})
      and (h.seen_at is null or h.seen_at < now() - make_interval(secs => ${staleAfterSeconds}))
      and not (j.locked_by = any(${own}::text[]))`.execute(db);
  const dead = rows.map((r) => r.locked_by);
  if (dead.length) {
    await sql`select graphile_worker.force_unlock_workers(${dead}::text[])`.execute(db);
  }
  await db.deleteFrom('worker_heartbeats').where('seen_at', '<', sql<Date>`now() - interval '1 day'`).execute();
  return dead;
}

/** Throws unless the database answers a statement now. */
export async function databaseAnswers(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/**
 * A job stopped by its worker's shutdown gives back the attempt it was charged when fetched:
 * graphile-worker then releases it with the shortest backoff, and a drain never uses up a job's attempts.
 */
export async function returnJobAttempt(db: Db, jobId: string): Promise<void> {
  await sql`update graphile_worker._private_jobs set attempts = greatest(attempts - 1, 0) where id = ${jobId}::bigint`.execute(db);
}
