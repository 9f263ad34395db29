import type { Insertable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { Page } from '../domain/inputs.ts';
import type { WebhookDeliveriesTable, WebhookDeliveryRow } from '../db/types.ts';
import { fetchPage, type PageOf } from './fetch-page.ts';

export async function insertWebhookDelivery(db: Db, d: Insertable<WebhookDeliveriesTable>): Promise<WebhookDeliveryRow> {
  return db.insertInto('webhook_deliveries').values(d).returningAll().executeTakeFirstOrThrow();
}

/** The recorded attempts for the team's generations among `generationIds`, oldest first. */
export function deliveriesOfGenerations(db: Db, teamId: string, generationIds: readonly string[]): Promise<WebhookDeliveryRow[]> {
  if (!generationIds.length) return Promise.resolve([]);
  return db
    .selectFrom('webhook_deliveries')
    .innerJoin('generations', 'generations.id', 'webhook_deliveries.generation_id')
    .selectAll('webhook_deliveries')
    .where('generations.team_id', '=', teamId)
    .where('webhook_deliveries.generation_id', 'in', [...generationIds])
    .orderBy('webhook_deliveries.attempted_at')
    .execute();
}

export interface DeliveryFilter {
  generationId?: string | undefined;
  ok?: boolean | undefined;
}

/** One key's attempts, newest first. */
export function listKeyDeliveries(db: Db, keyId: string, f: DeliveryFilter, page: Page): Promise<PageOf<WebhookDeliveryRow>> {
  let base = db.selectFrom('webhook_deliveries').where('api_key_id', '=', keyId);
  if (f.generationId) base = base.where('generation_id', '=', f.generationId);
  if (f.ok !== undefined) base = base.where('ok', '=', f.ok);
  return fetchPage(base, (q) => q.selectAll().orderBy('attempted_at', 'desc').orderBy('id', 'desc'), page);
}

export function findKeyDelivery(db: Db, keyId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('api_key_id', '=', keyId).where('id', '=', id).executeTakeFirst();
}
