import type { Insertable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { WebhookDeliveriesTable, WebhookDeliveryRow } from '../db/types.ts';

export async function insertWebhookDelivery(db: Db, d: Insertable<WebhookDeliveriesTable>): Promise<void> {
  await db.insertInto('webhook_deliveries').values(d).execute();
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
