import type { Insertable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { VoiceoverRow, VoiceoversTable } from '../db/types.ts';

export function insertVoiceover(db: Db, v: Insertable<VoiceoversTable>): Promise<VoiceoverRow> {
  return db.insertInto('voiceovers').values(v).returningAll().executeTakeFirstOrThrow();
}

export function findTeamVoiceover(db: Db, teamId: string, id: string): Promise<VoiceoverRow | undefined> {
  return db.selectFrom('voiceovers').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

