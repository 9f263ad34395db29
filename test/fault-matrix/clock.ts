import { sql } from 'kysely';
import type { Db } from '../../src/db/pool.ts';

/**
 * The service's clock, as far as a generation's waiting goes, moved forward on demand: every
 * time the service keeps in the database (when queued jobs run, deadlines, poll budgets and 429
 * pauses, breakers, job ages, worker heartbeats and locks, credit holds) is moved back by the
 * same amount, which to the service is that much time having passed. A cell waits for a 429's
 * pause, a backoff or a deadline without spending it, and the worker is nudged to look at once.
 */
export async function advanceClock(db: Db, ms: number): Promise<void> {
  if (ms <= 0) return;
  const by = sql`make_interval(secs => ${ms / 1000})`;
  const shifts = [
    sql`update graphile_worker._private_jobs set run_at = run_at - ${by}, locked_at = locked_at - ${by}`,
    sql`update generations set deadline_at = deadline_at - ${by} where status = 'processing'`,
    sql`update upstream_jobs set created_at = created_at - ${by}, updated_at = updated_at - ${by} where state in ('submitting', 'submitted')`,
    sql`update upstream_poll_budgets set next_at = next_at - ${by}, last_read_at = last_read_at - ${by}, paused_until = paused_until - ${by}`,
    sql`update engine_breakers set open_until = open_until - ${by}, updated_at = updated_at - ${by}`,
    sql`update worker_heartbeats set seen_at = seen_at - ${by}`,
    sql`update credit_holds set expires_at = expires_at - ${by}`,
  ];
  // One statement at a time, each its own transaction: a worker's statement that meets one of
  // them (its heartbeat, a cron's job) waits for it, and one caught in a deadlock is run again.
  for (const shift of shifts) {
    for (let attempt = 0; ; attempt++) {
      try {
        await shift.execute(db);
        break;
      } catch (e) {
        if ((e as { code?: string }).code !== '40P01' || attempt >= 5) throw e;
      }
    }
  }
  await nudgeWorkers(db);
}

/** graphile-worker looks for due jobs when told a job was added; otherwise only every second. */
export async function nudgeWorkers(db: Db): Promise<void> {
  await sql`select pg_notify('jobs:insert', '{"count":1}')`.execute(db);
}

export interface QueueState {
  /** Jobs a worker holds now. */
  running: number;
  /** Jobs due now that no worker holds yet. */
  due: number;
  /** When the next job not yet due is to run. */
  nextAt: Date | null;
}

/** What graphile-worker's queue holds, jobs that have used up their attempts left out. */
export async function queueState(db: Db): Promise<QueueState> {
  const { rows } = await sql<{ running: string; due: string; next_at: Date | null }>`
    select
      count(*) filter (where locked_at is not null) as running,
      count(*) filter (where locked_at is null and run_at <= now() and attempts < max_attempts) as due,
      min(run_at) filter (where locked_at is null and run_at > now() and attempts < max_attempts) as next_at
    from graphile_worker._private_jobs`.execute(db);
  const r = rows[0]!;
  return { running: Number(r.running), due: Number(r.due), nextAt: r.next_at };
}
