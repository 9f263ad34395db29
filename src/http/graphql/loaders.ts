import DataLoader from 'dataloader';
import type { App } from '../../app.ts';
import type { AdLibraryAdRow, AdLibraryBrandRow, AdLibraryMediaItem, AvatarRow, BrandRow, ProductRow, VoiceoverRow, WebhookDeliveryRow } from '../../db/types.ts';
import type { Page } from '../../domain/inputs.ts';
import { findBrandsByIds } from '../../repositories/ad-library.ts';
import type { PageOf } from '../../repositories/paging.ts';
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
  // The ad library is shared by every team: these loaders read it without a team filter.
  const adLibraryAdMedia = new DataLoader<string, AdLibraryMediaItem[] | null>(async (ids) => {
    const rows = await app.db.selectFrom('ad_library_ads').select(['id', 'media']).where('id', 'in', [...ids]).execute();
    return byId(rows, ids).map((r) => r?.media ?? null);
  });
  return {
    /** Listed (scraped) ad-library brands only, as REST's reads. */
    adLibraryBrand: new DataLoader<string, AdLibraryBrandRow | null>(async (ids) => byId(await findBrandsByIds(app.db, [...ids]), ids)),
    /** An ad's stored media items (source URL and storage key), for its `media` field. */
    adLibraryAdMedia,
    /**
     * One page of each brand's ads, newest start date first (REST's order), for a page of brands:
     * two queries per distinct page size, however many brands. Primes adLibraryAdMedia.
     */
    adLibraryAdsOfBrand: new DataLoader<{ brandId: string } & Page, PageOf<AdLibraryAdRow>, string>(
      async (keys) => {
        const groups = new Map<string, { page: Page; brandIds: string[] }>();
        for (const k of keys) {
          const g = `${k.limit}:${k.offset}`;
          if (!groups.has(g)) groups.set(g, { page: { limit: k.limit, offset: k.offset }, brandIds: [] });
          groups.get(g)!.brandIds.push(k.brandId);
        }
        const found = new Map<string, PageOf<AdLibraryAdRow>>();
        await Promise.all(
          [...groups.entries()].map(async ([g, { page, brandIds }]) => {
            const ranked = app.db
              .selectFrom('ad_library_ads')
              .selectAll()
              .select((eb) =>
                eb.fn
                  .agg<string>('row_number')
                  .over((ob) => ob.partitionBy('brand_id').orderBy('start_date', 'desc').orderBy('id', 'desc'))
                  .as('rn'),
              )
              .where('brand_id', 'in', brandIds);
            const [rows, counts] = await Promise.all([
              app.db
                .selectFrom(ranked.as('r'))
                .selectAll()
                .where('rn', '>', String(page.offset))
                .where('rn', '<=', String(page.offset + page.limit))
                .orderBy('brand_id')
                .orderBy('rn')
                .execute(),
              app.db
                .selectFrom('ad_library_ads')
                .select((eb) => ['brand_id', eb.fn.countAll<string>().as('total')])
                .where('brand_id', 'in', brandIds)
                .groupBy('brand_id')
                .execute(),
            ]);
            for (const id of brandIds) {
              const total = Number(counts.find((c) => c.brand_id === id)?.total ?? 0);
              found.set(`${id}:${g}`, { rows: [], total });
            }
            for (const { rn: _rn, ...row } of rows) {
              found.get(`${row.brand_id}:${g}`)!.rows.push(row);
              adLibraryAdMedia.prime(row.id, row.media);
            }
          }),
        );
        return keys.map((k) => found.get(`${k.brandId}:${k.limit}:${k.offset}`)!);
      },
      { cacheKeyFn: (k) => `${k.brandId}:${k.limit}:${k.offset}` },
    ),
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
