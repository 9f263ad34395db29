import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

/** Queues a graphile-worker job inside the caller's transaction, so the job exists iff its data does. */
export async function addJob(
  db: Db,
  identifier: string,
  payload: Record<string, unknown>,
  opts: { maxAttempts?: number; jobKey?: string; runAt?: Date } = {},
): Promise<void> {
  await sql`select graphile_worker.add_job(
    identifier => ${identifier},
    payload => ${JSON.stringify(payload)}::json,
    max_attempts => ${opts.maxAttempts ?? 25}::int,
    job_key => ${opts.jobKey ?? null}::text,
    run_at => ${opts.runAt ?? null}::timestamptz
  )`.execute(db);
}
