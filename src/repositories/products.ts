import type { Insertable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { ProductRow, ProductsTable } from '../db/types.ts';
import type { Page } from '../domain/inputs.ts';
import { fetchPage, type PageOf } from './fetch-page.ts';

export function listProducts(db: Db, teamId: string, page: Page): Promise<PageOf<ProductRow>> {
  return fetchPage(
    db.selectFrom('products').where('team_id', '=', teamId),
    (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    page,
  );
}

export function insertProduct(db: Db, p: Insertable<ProductsTable>): Promise<ProductRow> {
  return db.insertInto('products').values(p).returningAll().executeTakeFirstOrThrow();
}

export function findProduct(db: Db, teamId: string, id: string): Promise<ProductRow | undefined> {
  return db.selectFrom('products').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

export async function deleteProduct(db: Db, teamId: string, id: string): Promise<ProductRow | undefined> {
  return db.deleteFrom('products').where('team_id', '=', teamId).where('id', '=', id).returningAll().executeTakeFirst();
}

/** The team's products among `ids` (others' and missing ones are simply absent). */
export function findProductsByIds(db: Db, teamId: string, ids: readonly string[]): Promise<ProductRow[]> {
  if (!ids.length) return Promise.resolve([]);
  return db.selectFrom('products').selectAll().where('team_id', '=', teamId).where('id', 'in', [...ids]).execute();
}
