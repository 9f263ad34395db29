import type { Insertable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { VoiceoverRow, VoiceoversTable } from '../db/types.ts';

export function insertVoiceover(db: Db, v: Insertable<VoiceoversTable>): Promise<VoiceoverRow> {
  return db.insertInto('voiceovers').values(v).returningAll().executeTakeFirstOrThrow();
}

export function findTeamVoiceover(db: Db, teamId: string, id: string): Promise<VoiceoverRow | undefined> {
  return db.selectFrom('voiceovers').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}


export function findVoiceoverById(db: Db, id: string): Promise<VoiceoverRow | undefined> {
  return db.selectFrom('voiceovers').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findTeamVoiceoversByIds(db: Db, teamId: string, ids: readonly string[]): Promise<VoiceoverRow[]> {
  if (!ids.length) return Promise.resolve([]);
  return db.selectFrom('voiceovers').selectAll().where('team_id', '=', teamId).where('id', 'in', [...ids]).execute();
}
