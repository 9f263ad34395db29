import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

/** A team's own retention (null: the operator's). */
export async function setTeamRetention(db: Db, teamId: string, days: number | null): Promise<{ id: string; retention_days: number | null } | undefined> {
  return db.updateTable('teams').set({ retention_days: days }).where('id', '=', teamId).returning(['id', 'retention_days']).executeTakeFirst();
}

/** Every team whose files are kept for a while: all of them when the operator set a default, else those with their own. */
export async function teamsWithRetention(db: Db, operatorDays: number | undefined): Promise<{ id: string; retention_days: number | null }[]> {
  let q = db.selectFrom('teams').select(['id', 'retention_days']);
  if (operatorDays === undefined) q = q.where('retention_days', 'is not', null);
  return q.orderBy('id').execute();
}

export async function filesExpiredAt(db: Db, generationId: string): Promise<Date | null> {
  const row = await db.selectFrom('generations').select('files_expired_at').where('id', '=', generationId).executeTakeFirst();
  return row?.files_expired_at ?? null;
}

export interface ExpiringGeneration {
  id: string;
  result_keys: string[];
}

/**
 * Up to `limit` of the team's ended generations created before `cutoff` whose files are still kept,
 * oldest first, locked (others running the job skip them), and marked as expired: their result
 * keys emptied in the same statement. A generation a processing video edit reads is left for later.
 */
export async function expireGenerationFiles(trx: Db, teamId: string, cutoff: Date, limit: number): Promise<ExpiringGeneration[]> {
  return (await expireGenerationFilesStatement(teamId, cutoff, limit).execute(trx)).rows;
}

/** The statement itself, apart, so that a test can ask the planner how it reads a large table. */
export function expireGenerationFilesStatement(teamId: string, cutoff: Date, limit: number) {
  return sql<ExpiringGeneration>`
    with due as (
      select g.id from generations g
      where g.team_id = ${teamId} and g.status <> 'processing' and g.files_expired_at is null and g.created_at < ${cutoff}
        and not exists (select from generations e where e.source_generation_id = g.id and e.status = 'processing')
      order by g.created_at, g.id
      limit ${limit}
      for update skip locked
    ),
    before as (select g.id, g.result_keys from generations g join due using (id))
    update generations g set files_expired_at = now(), result_keys = '{}', output_bytes = 0, input_bytes = 0
    from before
    where g.id = before.id
    returning g.id, before.result_keys`;
}

export interface ExpiringAdMedia {
  id: string;
  keys: string[];
}

/** Up to `limit` scraped ads last copied before `cutoff` whose media copies are kept: marked, their keys answered and cleared. */
export async function expireAdMedia(trx: Db, cutoff: Date, limit: number): Promise<ExpiringAdMedia[]> {
  const { rows } = await sql<ExpiringAdMedia>`
    with due as (
      select id, media from ad_library_ads
      where media_expired_at is null and updated_at < ${cutoff}
      order by updated_at, id
      limit ${limit}
      for update skip locked
    )
    update ad_library_ads a
    set media_expired_at = now(),
        media = (select coalesce(jsonb_agg(m || '{"key": null}'::jsonb order by n), '[]'::jsonb) from jsonb_array_elements(due.media) with ordinality as t(m, n))
    from due
    where a.id = due.id
    returning a.id, array(select m ->> 'key' from jsonb_array_elements(due.media) as t(m) where m ->> 'key' is not null) as keys`.execute(trx);
  return rows;
}

/** Up to `limit` scraped brands last copied before `cutoff` whose profile picture copy is kept: marked, the keys answered and cleared. */
export async function expireBrandPictures(trx: Db, cutoff: Date, limit: number): Promise<ExpiringAdMedia[]> {
  const { rows } = await sql<ExpiringAdMedia>`
    with due as (
      select id, profile_picture_key from ad_library_brands
      where profile_picture_key is not null and updated_at < ${cutoff}
      order by updated_at, id
      limit ${limit}
      for update skip locked
    )
    update ad_library_brands b
    set profile_picture_key = null, profile_picture_expired_at = now()
    from due
    where b.id = due.id
    returning b.id, array[due.profile_picture_key] as keys`.execute(trx);
  return rows;
}
