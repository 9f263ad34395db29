import { sql, type Insertable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { GenerationRow, GenerationsTable } from '../db/types.ts';
import type { GenerationStatus, GenerationType } from '../domain/generation-types.ts';
import type { Page } from '../domain/inputs.ts';
import { fetchPage, type PageOf } from './paging.ts';

export function insertGeneration(db: Db, g: Insertable<GenerationsTable>): Promise<{ id: string; created_at: Date }> {
  return db.insertInto('generations').values(g).returning(['id', 'created_at']).executeTakeFirstOrThrow();
}

export async function linkGeneration(db: Db, generationId: string, productIds: string[], avatarIds: string[]): Promise<void> {
  if (productIds.length) {
    await db.insertInto('generation_products').values(productIds.map((product_id) => ({ generation_id: generationId, product_id }))).execute();
  }
  if (avatarIds.length) {
    await db.insertInto('generation_avatars').values(avatarIds.map((avatar_id) => ({ generation_id: generationId, avatar_id }))).execute();
  }
}

export function findGeneration(db: Db, teamId: string, id: string): Promise<GenerationRow | undefined> {
  return db.selectFrom('generations').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

export function findGenerationById(db: Db, id: string): Promise<GenerationRow | undefined> {
  return db.selectFrom('generations').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface GenerationFilter {
  type?: 'talking-avatar' | 'ai-video' | 'image' | undefined;
  status?: GenerationStatus | undefined;
}

export function listGenerations(db: Db, teamId: string, filter: GenerationFilter, page: Page): Promise<PageOf<GenerationRow>> {
  let base = db.selectFrom('generations').where('team_id', '=', teamId);
  // `image` is every image generation (decision 9); the other filter values are exact types.
  if (filter.type === 'image') base = base.where('kind', '=', 'image');
  else if (filter.type) base = base.where('type', '=', filter.type as GenerationType);
  if (filter.status) base = base.where('status', '=', filter.status);
  return fetchPage(base, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

/** Moves a processing generation to its end state; returns undefined if it had already ended. */
export function finishGeneration(
  db: Db,
  id: string,
  end:
    | { status: 'completed'; result_keys: string[]; result_meta: Record<string, unknown> }
    | { status: 'failed'; error: string },
): Promise<GenerationRow | undefined> {
  const set =
    end.status === 'completed'
      ? { status: end.status, result_keys: end.result_keys, result_meta: JSON.stringify(end.result_meta), completed_at: sql<Date>`now()` }
      : { status: end.status, error: end.error, completed_at: sql<Date>`now()` };
  return db
    .updateTable('generations')
    .set(set)
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .returningAll()
    .executeTakeFirst();
}

export function overdueGenerationIds(db: Db, limit = 100): Promise<string[]> {
  return db
    .selectFrom('generations')
    .select('id')
    .where('status', '=', 'processing')
    .where('deadline_at', '<', sql<Date>`now()`)
    .limit(limit)
    .execute()
    .then((rows) => rows.map((r) => r.id));
}

/** The product links of the team's generations among `generationIds`. */
export function productLinksOfGenerations(db: Db, teamId: string, generationIds: readonly string[]): Promise<{ generation_id: string; product_id: string }[]> {
  if (!generationIds.length) return Promise.resolve([]);
  return db
    .selectFrom('generation_products')
    .innerJoin('generations', 'generations.id', 'generation_products.generation_id')
    .select(['generation_products.generation_id', 'generation_products.product_id'])
    .where('generations.team_id', '=', teamId)
    .where('generation_products.generation_id', 'in', [...generationIds])
    .execute();
}
