import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { UpstreamJobEventRow, UpstreamJobRow, UpstreamJobState } from '../db/types.ts';

async function logEvent(db: Db, id: string, state: string, detail: string | null): Promise<void> {
  await db.insertInto('upstream_job_events').values({ upstream_job_id: id, state, detail }).execute();
}

/** The generation's attempt still in flight (submitting or submitted), if any. */
export function findLiveUpstreamJob(db: Db, generationId: string): Promise<UpstreamJobRow | undefined> {
  return db.selectFrom('upstream_jobs').selectAll().where('generation_id', '=', generationId).where('state', 'in', ['submitting', 'submitted']).executeTakeFirst();
}

/** The attempt a provider's job id belongs to, in whatever state (an inbound webhook names only that). */
export function findByProviderJob(db: Db, provider: string, providerJobId: string): Promise<UpstreamJobRow | undefined> {
  return db.selectFrom('upstream_jobs').selectAll().where('provider', '=', provider).where('provider_job_id', '=', providerJobId).orderBy('created_at', 'desc').executeTakeFirst();
}

/** How many attempts a provider holds in flight (submitted): the jobs its polls are shared by. */
export async function countSubmitted(db: Db, provider: string): Promise<number> {
  const row = await db.selectFrom('upstream_jobs').select((eb) => eb.fn.countAll<string>().as('n')).where('provider', '=', provider).where('state', '=', 'submitted').executeTakeFirstOrThrow();
  return Number(row.n);
}

export function findUpstreamJob(db: Db, id: string): Promise<UpstreamJobRow | undefined> {
  return db.selectFrom('upstream_jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Records an attempt before anything is sent; its id is the attempt id the provider may see. */
export async function insertSubmitting(db: Db, generationId: string, provider: string): Promise<UpstreamJobRow> {
  const row = await db.insertInto('upstream_jobs').values({ generation_id: generationId, provider }).returningAll().executeTakeFirstOrThrow();
  await logEvent(db, row.id, 'submitting', null);
  return row;
}

/** The provider accepted the job: its id and handle, committed before any waiting. */
export async function markSubmitted(db: Db, id: string, providerJobId: string, handle: Record<string, unknown>): Promise<void> {
  await db
    .updateTable('upstream_jobs')
    .set({ state: 'submitted', provider_job_id: providerJobId, handle: JSON.stringify(handle), updated_at: sql`now()` })
    .where('id', '=', id)
    .where('state', '=', 'submitting')
    .execute();
  await logEvent(db, id, 'submitted', providerJobId);
}

/**
 * An attempt its provider answered in the same call (a synchronous one: speech made and handed
 * back): its id and its end in one step, so no live attempt waits to be polled.
 */
export async function endAnsweredUpstreamJob(db: Db, id: string, providerJobId: string): Promise<boolean> {
  const row = await db
    .updateTable('upstream_jobs')
    .set({ state: 'succeeded', provider_job_id: providerJobId, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('state', '=', 'submitting')
    .returning('id')
    .executeTakeFirst();
  if (row) await logEvent(db, id, 'succeeded', providerJobId);
  return row !== undefined;
}

/** Ends a live attempt; false when it had already ended (a second poll, a late hint). */
export async function endUpstreamJob(
  db: Db,
  id: string,
  end: { state: Extract<UpstreamJobState, 'succeeded' | 'failed' | 'cancelled'>; error?: string | null; cost?: number | null },
): Promise<boolean> {
  const row = await db
    .updateTable('upstream_jobs')
    .set({ state: end.state, error: end.error ?? null, cost: end.cost ?? null, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('state', 'in', ['submitting', 'submitted'])
    .returning('id')
    .executeTakeFirst();
  if (row) await logEvent(db, id, end.state, end.error ?? null);
  return row !== undefined;
}

export async function countRefetch(db: Db, id: string, detail: string): Promise<void> {
  await db.updateTable('upstream_jobs').set((eb) => ({ refetches: eb('refetches', '+', 1), updated_at: sql`now()` })).where('id', '=', id).execute();
  await logEvent(db, id, 'result_refetch', detail);
}

export async function countPoll(db: Db, id: string, detail: string, o: { answered?: boolean } = {}): Promise<void> {
  await db
    .updateTable('upstream_jobs')
    .set((eb) => ({ polls: eb('polls', '+', 1), ...(o.answered ? { refused_reads: 0 } : {}), updated_at: sql`now()` }))
    .where('id', '=', id)
    .execute();
  await logEvent(db, id, 'polled', detail);
}

/** A read the provider refused: counted, and the run of them so far answered. */
export async function countRefusedRead(db: Db, id: string, detail: string): Promise<number> {
  const row = await db
    .updateTable('upstream_jobs')
    .set((eb) => ({ polls: eb('polls', '+', 1), refused_reads: eb('refused_reads', '+', 1), updated_at: sql`now()` }))
    .where('id', '=', id)
    .returning('refused_reads')
    .executeTakeFirst();
  await logEvent(db, id, 'polled', detail);
  return row?.refused_reads ?? 0;
}

/**
 * Every attempt of these generations with their events, oldest first: what an operator sees.
 * With a team, only that team's generations count.
 */
export async function upstreamHistory(
  db: Db,
  generationIds: readonly string[],
  teamId?: string,
): Promise<Array<UpstreamJobRow & { events: UpstreamJobEventRow[] }>> {
  if (!generationIds.length) return [];
  let q = db.selectFrom('upstream_jobs').innerJoin('generations', 'generations.id', 'upstream_jobs.generation_id').selectAll('upstream_jobs').where('upstream_jobs.generation_id', 'in', [...generationIds]);
  if (teamId !== undefined) q = q.where('generations.team_id', '=', teamId);
  const jobs = await q.orderBy('upstream_jobs.created_at').orderBy('upstream_jobs.id').execute();
  if (!jobs.length) return [];
  const events = await db
    .selectFrom('upstream_job_events')
    .selectAll()
    .where('upstream_job_id', 'in', jobs.map((j) => j.id))
    .orderBy('id')
    .execute();
  return jobs.map((j) => ({ ...j, events: events.filter((e) => e.upstream_job_id === j.id) }));
}
