import { sql } from 'kysely';
import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { BrandRow, BrandsTable } from '../db/types.ts';
import type { Page } from '../domain/inputs.ts';
import { fetchPage, type PageOf } from './fetch-page.ts';

export function listBrands(db: Db, teamId: string, page: Page): Promise<PageOf<BrandRow>> {
  return fetchPage(
    db.selectFrom('brands').where('team_id', '=', teamId),
    (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    page,
  );
}

export function insertBrand(db: Db, b: Insertable<BrandsTable>): Promise<BrandRow> {
  return db.insertInto('brands').values(b).returningAll().executeTakeFirstOrThrow();
}

export function findBrand(db: Db, teamId: string, id: string): Promise<BrandRow | undefined> {
  return db.selectFrom('brands').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

export function updateBrand(db: Db, teamId: string, id: string, b: Updateable<BrandsTable>): Promise<BrandRow | undefined> {
  return db.updateTable('brands').set(b).where('team_id', '=', teamId).where('id', '=', id).returningAll().executeTakeFirst();
}

export function findBrandsByIds(db: Db, teamId: string, ids: readonly string[]): Promise<BrandRow[]> {
  if (!ids.length) return Promise.resolve([]);
  return db.selectFrom('brands').selectAll().where('team_id', '=', teamId).where('id', 'in', [...ids]).execute();
}

/** Deletes the team's brand unless a generation still being made uses it; undefined when missing, 'in_use' when kept. */
export async function deleteBrandUnlessInUse(db: Db, teamId: string, id: string): Promise<BrandRow | 'in_use' | undefined> {
  return db.transaction().execute(async (trx) => {
    const brand = await trx.selectFrom('brands').selectAll().where('team_id', '=', teamId).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!brand) return undefined;
    const busy = await trx
      .selectFrom('generations')
      .select('id')
      .where('team_id', '=', teamId)
      .where('status', '=', 'processing')
      .where(sql<boolean>`params->>'brand_id' = ${id}`)
      .limit(1)
      .executeTakeFirst();
    if (busy) return 'in_use';
    await trx.deleteFrom('brands').where('id', '=', id).execute();
    return brand;
  });
}
