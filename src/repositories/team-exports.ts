import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

export interface TeamExportRow {
  id: string;
  team_id: string;
  status: 'processing' | 'completed' | 'failed';
  archive_key: string | null;
  size: string | null;
  error: string | null;
  created_at: Date;
  completed_at: Date | null;
  downloaded_at: Date | null;
}

export async function findTeamExport(db: Db, id: string, teamId?: string): Promise<TeamExportRow | undefined> {
  const team = teamId ? sql`and team_id = ${teamId}` : sql``;
  return (await sql<TeamExportRow>`select * from team_exports where id = ${id} ${team}`.execute(db)).rows[0];
}

/** The live team's row, locked: two starts at once make one export. False when the team is missing or deleted. */
export async function lockLiveTeam(db: Db, teamId: string): Promise<boolean> {
  return (await sql`select id from teams where id = ${teamId} and deleted_at is null for update`.execute(db)).rows.length > 0;
}

export async function hasRunningExport(db: Db, teamId: string): Promise<boolean> {
  return (await sql`select 1 from team_exports where team_id = ${teamId} and status = 'processing'`.execute(db)).rows.length > 0;
}

export async function insertTeamExport(db: Db, teamId: string, userId: string | null): Promise<TeamExportRow> {
  return (await sql<TeamExportRow>`insert into team_exports (team_id, requested_by) values (${teamId}, ${userId}) returning *`.execute(db)).rows[0]!;
}

export async function listTeamExports(db: Db, teamId: string, limit: number): Promise<TeamExportRow[]> {
  return (await sql<TeamExportRow>`select * from team_exports where team_id = ${teamId} order by created_at desc limit ${limit}`.execute(db)).rows;
}

/** Marks the link handed out; false when it already was. */
export async function markExportDownloaded(db: Db, id: string): Promise<boolean> {
  return (await sql`update team_exports set downloaded_at = now() where id = ${id} and downloaded_at is null returning id`.execute(db)).rows.length > 0;
}

/** False when the export is no longer processing (its team deleted meanwhile). */
export async function completeTeamExport(db: Db, id: string, archiveKey: string, size: number): Promise<boolean> {
  const { rows } = await sql`update team_exports set status = 'completed', archive_key = ${archiveKey}, size = ${size}, completed_at = now()
    where id = ${id} and status = 'processing' returning id`.execute(db);
  return rows.length > 0;
}

export async function failTeamExport(db: Db, id: string, error: string): Promise<void> {
  await sql`update team_exports set status = 'failed', error = ${error}, completed_at = now() where id = ${id} and status = 'processing'`.execute(db);
}
