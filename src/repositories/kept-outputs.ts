import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

/** An output its generation's engine made and we stored, while the rest is made. */
export interface KeptOutput {
  position: number;
  key: string;
  bytes: number;
}

/** The generation's kept outputs, in their order. */
export function listKeptOutputs(db: Db, generationId: string): Promise<KeptOutput[]> {
  return db.selectFrom('kept_outputs').select(['position', 'key', 'bytes']).where('generation_id', '=', generationId).orderBy('position').execute();
}

/**
 * Records a stored output, only while its generation is processing (read under a share lock, so a
 * generation cannot end between the check and the row: its end waits, then sees the row). False
 * when it had ended: the caller removes what it stored.
 */
export async function recordKeptOutput(db: Db, o: KeptOutput & { generationId: string; upstreamJobId: string | null }): Promise<boolean> {
  const { rows } = await sql<{ position: number }>`
    insert into kept_outputs (generation_id, position, key, bytes, upstream_job_id)
    select g.id, ${o.position}::int, ${o.key}, ${o.bytes}::bigint, ${o.upstreamJobId}::uuid
    from (select id from generations where id = ${o.generationId}::uuid and status = 'processing' for share) g
    returning position`.execute(db);
  return rows.length > 0;
}

/** Removes the generation's kept rows (their outputs became results, or are to be deleted); answers them. */
export function takeKeptOutputs(db: Db, generationId: string): Promise<KeptOutput[]> {
  return db.deleteFrom('kept_outputs').where('generation_id', '=', generationId).returning(['position', 'key', 'bytes']).execute().then((rows) => rows.sort((a, b) => a.position - b.position));
}
