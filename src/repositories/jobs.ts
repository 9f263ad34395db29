import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

/** A graphile-worker job as queued: built (and its payload checked) by its contract (src/jobs/define.ts jobSpec). */
export interface JobSpec {
  identifier: string;
  payload: Record<string, unknown>;
  maxAttempts: number;
  jobKey?: string;
  runAt?: Date;
  priority?: number;
}

/** Queues a graphile-worker job inside the caller's transaction, so the job exists iff its data does. */
export async function addJob(db: Db, job: JobSpec): Promise<void> {
  await sql`select graphile_worker.add_job(
    identifier => ${job.identifier},
    payload => ${JSON.stringify(job.payload)}::json,
    max_attempts => ${job.maxAttempts}::int,
    job_key => ${job.jobKey ?? null}::text,
    run_at => ${job.runAt ?? null}::timestamptz,
    priority => ${job.priority ?? null}::int
  )`.execute(db);
}

export interface JobCounts {
  task: string;
  queued: number;
  running: number;
  failed: number;
  /** Seconds the oldest job due to run has waited; 0 when none waits. */
  oldest_queued_seconds: number;
}

/** The queue by task, for /metrics: waiting (due or not), being run, and failed for good. */
export async function jobCountsByTask(db: Db): Promise<JobCounts[]> {
  const { rows } = await sql<{ task: string; queued: string; running: string; failed: string; oldest: number | null }>`
    select task_identifier as task,
      count(*) filter (where locked_at is null and attempts < max_attempts) as queued,
      count(*) filter (where locked_at is not null) as running,
      count(*) filter (where locked_at is null and attempts >= max_attempts) as failed,
      extract(epoch from now() - min(run_at) filter (where locked_at is null and attempts < max_attempts and run_at <= now()))::float8 as oldest
    from graphile_worker.jobs
    group by task_identifier`.execute(db);
  return rows.map((r) => ({ task: r.task, queued: Number(r.queued), running: Number(r.running), failed: Number(r.failed), oldest_queued_seconds: r.oldest ?? 0 }));
}
