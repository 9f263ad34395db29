import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { UpstreamJobRow } from '../db/types.ts';

/**
 * Up to `limit` other live jobs of a provider that one batched read may cover (their handle holds
 * `handles`), those whose next look is due soonest first, each taken in the same statement: its
 * queued look, if no worker holds it, is put off by `leaseMs`. So no look of the same job reads it
 * while the batch decides it, and a worker that dies holding the batch leaves every job its look.
 * A job whose look is running now is passed over.
 */
export async function leaseBatchCompanions(
  db: Db,
  o: { provider: string; lead: string; handles: Readonly<Record<string, string>>; skip: readonly string[]; limit: number; leaseMs: number },
): Promise<UpstreamJobRow[]> {
  if (o.limit <= 0) return [];
  const { rows } = await sql<UpstreamJobRow>`
    with picked as (
      select u.id as upstream_job_id, j.id as queued_id
      from upstream_jobs u
      join graphile_worker._private_jobs j on j.key = 'upstream:' || u.id::text
      where u.provider = ${o.provider} and u.state = 'submitted' and u.id <> ${o.lead}::uuid
        and u.handle @> ${JSON.stringify(o.handles)}::jsonb
        and not (u.id = any(${o.skip}::uuid[]))
        and j.locked_at is null
      order by j.run_at, u.updated_at
      limit ${o.limit}
      for update of j skip locked
    ), leased as (
      update graphile_worker._private_jobs j set run_at = greatest(j.run_at, now() + ${o.leaseMs}::double precision * interval '1 millisecond')
      from picked where j.id = picked.queued_id
      returning picked.upstream_job_id
    )
    select u.* from upstream_jobs u join leased on leased.upstream_job_id = u.id`.execute(db);
  return rows;
}

/** How far ahead of now the provider's line of read slots reaches (0: no look holds a slot ahead). */
export async function pollLineAheadMs(db: Db, provider: string): Promise<number> {
  const { rows } = await sql<{ ahead_ms: number }>`
    select greatest(0, extract(epoch from (next_at - now())) * 1000)::double precision as ahead_ms
    from upstream_poll_budgets where provider = ${provider}`.execute(db);
  return Math.ceil(rows[0]?.ahead_ms ?? 0);
}
