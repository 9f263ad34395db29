import DataLoader from 'dataloader';
import type { App } from '../../app.ts';
import type { AvatarRow, BrandRow, ProductRow, VoiceoverRow, WebhookDeliveryRow } from '../../db/types.ts';
import type { Principal } from '../../services/context.ts';

/**
 * Per-request batching for relations: a page of generations with their avatars, products and
 * brands costs one query per relation, whatever the page size. Rows of other teams never load.
 */
export function createLoaders(app: App, principal: Principal | undefined) {
  const teamId = principal?.teamId ?? '00000000-0000-0000-0000-000000000000';
  const byId = <T extends { id: string }>(rows: T[], ids: readonly string[]) => {
    const map = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => map.get(id) ?? null);
  };
  return {
    product: new DataLoader<string, ProductRow | null>(async (ids) =>
      byId(await app.db.selectFrom('products').selectAll().where('team_id', '=', teamId).where('id', 'in', [...ids]).execute(), ids),
    ),
    brand: new DataLoader<string, BrandRow | null>(async (ids) =>
      byId(await app.db.selectFrom('brands').selectAll().where('team_id', '=', teamId).where('id', 'in', [...ids]).execute(), ids),
    ),
    voiceover: new DataLoader<string, VoiceoverRow | null>(async (ids) =>
      byId(await app.db.selectFrom('voiceovers').selectAll().where('team_id', '=', teamId).where('id', 'in', [...ids]).execute(), ids),
    ),
    avatar: new DataLoader<string, AvatarRow | null>(async (ids) =>
      byId(
        await app.db
          .selectFrom('avatars')
          .selectAll()
          .where('id', 'in', [...ids])
          .where((eb) => eb.or([eb('team_id', 'is', null), eb('team_id', '=', teamId)]))
          .execute(),
        ids,
      ),
    ),
    webhookDeliveriesOfGeneration: new DataLoader<string, WebhookDeliveryRow[]>(async (ids) => {
      const rows = await app.db
        .selectFrom('webhook_deliveries')
        .innerJoin('generations', 'generations.id', 'webhook_deliveries.generation_id')
        .selectAll('webhook_deliveries')
        .where('generations.team_id', '=', teamId)
        .where('webhook_deliveries.generation_id', 'in', [...ids])
        .orderBy('webhook_deliveries.attempted_at')
        .execute();
      return ids.map((id) => rows.filter((r) => r.generation_id === id));
    }),
    productIdsOfGeneration: new DataLoader<string, string[]>(async (ids) => {
      const rows = await app.db.selectFrom('generation_products').select(['generation_id', 'product_id']).where('generation_id', 'in', [...ids]).execute();
      return ids.map((id) => rows.filter((r) => r.generation_id === id).map((r) => r.product_id));
    }),
  };
}
export type Loaders = ReturnType<typeof createLoaders>;
