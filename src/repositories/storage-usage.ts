import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

// Storage usage: team_storage is kept by the triggers of migrations 0021 and 0024 from the size columns of
// the rows that name stored files; nothing here writes it.

export interface TeamStorageBytes {
  outputs_bytes: number;
  inputs_bytes: number;
  uploads_bytes: number;
}

export async function teamStorage(db: Db, teamId: string): Promise<TeamStorageBytes> {
  const row = await db.selectFrom('team_storage').select(['outputs_bytes', 'inputs_bytes', 'uploads_bytes']).where('team_id', '=', teamId).executeTakeFirst();
  return row ?? { outputs_bytes: 0, inputs_bytes: 0, uploads_bytes: 0 };
}

/** The `limit` teams storing the most, largest first (the gauge's teams). */
export async function largestTeamStorage(db: Db, limit: number): Promise<{ team_id: string; total_bytes: number }[]> {
  if (limit < 1) return [];
  const { rows } = await sql<{ team_id: string; total_bytes: number }>`
    select team_id, outputs_bytes + inputs_bytes + uploads_bytes as total_bytes from team_storage
    where outputs_bytes + inputs_bytes + uploads_bytes > 0
    order by total_bytes desc, team_id limit ${limit}`.execute(db);
  return rows;
}

/** Every team's bytes together, by kind. */
export async function storageTotals(db: Db): Promise<TeamStorageBytes> {
  const { rows } = await sql<TeamStorageBytes>`
    select coalesce(sum(outputs_bytes), 0)::bigint as outputs_bytes, coalesce(sum(inputs_bytes), 0)::bigint as inputs_bytes,
      coalesce(sum(uploads_bytes), 0)::bigint as uploads_bytes from team_storage`.execute(db);
  return rows[0]!;
}

/** The input copy kept for a generation alone (a talking avatar's speech), once stored. */
export async function setGenerationInputBytes(db: Db, generationId: string, bytes: number): Promise<void> {
  await db.updateTable('generations').set({ input_bytes: bytes }).where('id', '=', generationId).where('files_expired_at', 'is', null).execute();
}

export async function liveTeamIds(db: Db): Promise<string[]> {
  return (await db.selectFrom('teams').select('id').where(sql<boolean>`deleted_at is null`).orderBy('id').execute()).map((r) => r.id);
}

/** What `adforge storage recount` reads, for one team: each row's stored files and recorded sizes. */
export async function teamStoredRows(db: Db, teamId: string) {
  const [generations, products, avatars, voiceovers] = await Promise.all([
    db.selectFrom('generations').select(['id', 'result_keys', 'output_bytes', 'input_bytes', 'files_expired_at']).where('team_id', '=', teamId).execute(),
    db.selectFrom('products').select(['id', 'image_key', 'image_bytes']).where('team_id', '=', teamId).execute(),
    db.selectFrom('avatars').select(['id', 'image_key', 'image_bytes']).where('team_id', '=', teamId).execute(),
    db.selectFrom('voiceovers').select(['id', 'audio_key', 'audio_bytes']).where('team_id', '=', teamId).execute(),
  ]);
  return { generations, products, avatars, voiceovers };
}

export async function setGenerationBytes(db: Db, id: string, bytes: { output_bytes: number; input_bytes: number }): Promise<void> {
  await db.updateTable('generations').set(bytes).where('id', '=', id).execute();
}

export async function setImageBytes(db: Db, table: 'products' | 'avatars', id: string, bytes: number): Promise<void> {
  await db.updateTable(table).set({ image_bytes: bytes }).where('id', '=', id).execute();
}

export async function setVoiceoverBytes(db: Db, id: string, bytes: number): Promise<void> {
  await db.updateTable('voiceovers').set({ audio_bytes: bytes }).where('id', '=', id).execute();
}
