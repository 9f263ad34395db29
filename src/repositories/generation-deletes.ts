import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { GenerationStatus, GenerationType } from '../domain/generation-types.ts';

export interface DeletableGeneration {
  id: string;
  status: GenerationStatus;
  result_keys: string[];
}

/** The team's generations among `ids`, locked until the transaction ends (others' and missing ones are absent). */
export function lockTeamGenerations(trx: Db, teamId: string, ids: readonly string[]): Promise<DeletableGeneration[]> {
  if (!ids.length) return Promise.resolve([]);
  return trx
    .selectFrom('generations')
    .select(['id', 'status', 'result_keys'])
    .where('team_id', '=', teamId)
    .where('id', 'in', [...ids])
    .orderBy('id')
    .forUpdate()
    .execute();
}

export interface DeleteFilter {
  type?: 'talking-avatar' | 'ai-video' | 'image' | undefined;
  status?: GenerationStatus | undefined;
  createdBefore?: Date | undefined;
}

/**
 * The team's generations the filter matches, oldest first: the ids of up to `limit` that can be
 * deleted, and how many it matches that cannot (still processing, or the source of a video edit
 * still processing).
 */
export async function matchingGenerations(db: Db, teamId: string, f: DeleteFilter, limit: number): Promise<{ ids: string[]; skipped: number }> {
  let base = db.selectFrom('generations as g').where('g.team_id', '=', teamId);
  // The list's filter (decision 9): `image` is every image generation, the rest exact types.
  if (f.type === 'image') base = base.where('g.kind', '=', 'image');
  else if (f.type) base = base.where('g.type', '=', f.type as GenerationType);
  if (f.status) base = base.where('g.status', '=', f.status);
  if (f.createdBefore) base = base.where('g.created_at', '<', f.createdBefore);
  const blocked = sql<boolean>`(g.status = 'processing' or exists (select from generations e where e.source_generation_id = g.id and e.status = 'processing'))`;
  const ids = await base.select('g.id').where(sql<boolean>`not ${blocked}`).orderBy('g.created_at').orderBy('g.id').limit(limit).execute();
  const skipped = await base.select((eb) => eb.fn.countAll<string>().as('n')).where(blocked).executeTakeFirstOrThrow();
  return { ids: ids.map((r) => r.id), skipped: Number(skipped.n) };
}

/** Those among `ids` that a generation still processing uses as its source (a video edit of its result). */
export async function sourcesOfProcessing(trx: Db, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await trx
    .selectFrom('generations')
    .select('source_generation_id')
    .distinct()
    .where('status', '=', 'processing')
    .where('source_generation_id', 'in', [...ids])
    .execute();
  return rows.map((r) => r.source_generation_id!).filter(Boolean);
}

/** The provider jobs of these generations that a provider may still be working on (submitted, not ended). */
export function liveUpstreamJobsOf(trx: Db, ids: readonly string[]): Promise<{ id: string; provider: string; handle: Record<string, unknown> }[]> {
  if (!ids.length) return Promise.resolve([]);
  return trx
    .selectFrom('upstream_jobs')
    .select(['id', 'provider', 'handle'])
    .where('generation_id', 'in', [...ids])
    .where('state', '=', 'submitted')
    .execute();
}

/**
 * Deletes the generations (locked by the caller) and, through their foreign keys, their product
 * and avatar links, upstream jobs with their events and webhook deliveries. Campaign rows keep the
 * id as `deleted_generation_id` with their counts; a tombstone keeps what the ledger's lines still
 * name (type and credits, no content). The ledger itself is not touched.
 */
export async function deleteGenerationRows(trx: Db, ids: readonly string[]): Promise<number> {
  if (!ids.length) return 0;
  const list = [...ids];
  await sql`update campaign_rows set deleted_generation_id = generation_id, generation_id = null
    where generation_id = any(${list}::uuid[])`.execute(trx);
  const { rows } = await sql<{ n: string }>`
    with gone as (
      delete from generations where id = any(${list}::uuid[])
      returning id, team_id, operation, type, kind, status, credits, created_at
    ), kept as (
      insert into deleted_generations (id, team_id, operation, type, kind, status, credits, created_at)
      select id, team_id, operation, type, kind, status, credits, created_at from gone
      on conflict (id) do nothing
    )
    select count(*) as n from gone`.execute(trx);
  return Number(rows[0]?.n ?? 0);
}
