import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { UploadsTable } from '../db/types.ts';
import type { Page } from '../domain/inputs.ts';
import { fetchPage, type PageOf } from './fetch-page.ts';

export type UploadRow = Selectable<UploadsTable>;

export function insertUpload(db: Db, row: Insertable<UploadsTable>): Promise<UploadRow> {
  return db.insertInto('uploads').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findUpload(db: Db, teamId: string, id: string): Promise<UploadRow | undefined> {
  return db.selectFrom('uploads').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

/** The team's uploads among `ids`; others' and missing ones are absent. */
export function findUploads(db: Db, teamId: string, ids: readonly string[]): Promise<UploadRow[]> {
  if (!ids.length) return Promise.resolve([]);
  return db.selectFrom('uploads').selectAll().where('team_id', '=', teamId).where('id', 'in', [...ids]).execute();
}

export function listUploads(db: Db, teamId: string, page: Page): Promise<PageOf<UploadRow>> {
  return fetchPage(
    db.selectFrom('uploads').where('team_id', '=', teamId).where('status', '=', 'ready'),
    (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    page,
  );
}

export function markUploadReady(db: Db, id: string, v: { content_type: string; kind: 'image' | 'video' | 'audio'; size: number }): Promise<UploadRow | undefined> {
  return db.updateTable('uploads').set({ status: 'ready', ...v }).where('id', '=', id).where('status', '=', 'pending').returningAll().executeTakeFirst();
}

export function deleteUploadRow(db: Db, id: string): Promise<UploadRow | undefined> {
  return db.deleteFrom('uploads').where('id', '=', id).returningAll().executeTakeFirst();
}

/**
 * Deletes up to `limit` uploads past their time that nothing still needs: no processing generation
 * names them, no brand shows them, no campaign row waiting to be submitted carries them. Answers
 * their storage keys.
 */
export async function deleteExpiredUploads(db: Db, now: Date, limit: number): Promise<string[]> {
  const rows = await sql<{ storage_key: string }>`
    delete from uploads where id in (
      select u.id from uploads u
      where u.expires_at <= ${now}
        and not exists (
          select 1 from generations g
          where g.team_id = u.team_id and g.status = 'processing' and strpos(g.params::text, 'upload:' || u.id::text) > 0)
        and not exists (
          select 1 from brands b
          where b.team_id = u.team_id and ('upload:' || u.id::text) in (b.logo_url, b.reference_image_url))
        and not exists (
          select 1 from campaign_rows r join campaigns c on c.id = r.campaign_id
          where c.team_id = u.team_id and r.state = 'pending' and strpos(r.body::text, 'upload:' || u.id::text) > 0)
      order by u.expires_at
      limit ${limit}
      for update of u skip locked)
    returning storage_key`.execute(db);
  return rows.rows.map((r) => r.storage_key);
}
