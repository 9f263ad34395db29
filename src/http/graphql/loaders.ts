import DataLoader from 'dataloader';
import type { AdLibraryAdRow, AdLibraryBrandRow, AdLibraryMediaItem, AvatarRow, BrandRow, ProductRow, VoiceoverRow, WebhookDeliveryRow } from '../../db/types.ts';
import type { Page } from '../../domain/inputs.ts';
import type { PageOf } from '../../repositories/fetch-page.ts';
import type { Principal } from '../../services/principal.ts';
import type { Services } from '../../service-factories.ts';
import type { UpstreamAttempt } from '../../services/generations/views.ts';

const byId = <T extends { id: string }>(rows: T[], ids: readonly string[]) => {
  const map = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => map.get(id) ?? null);
};
const groupedBy = <T, K extends keyof T>(rows: T[], key: K, ids: readonly T[K][]) => ids.map((id) => rows.filter((r) => r[key] === id));

// Anonymous requests (introspection, the schema's public parts) see no team's rows.
const NO_TEAM: Principal = { teamId: '00000000-0000-0000-0000-000000000000', keyId: null };

/**
 * Per-request batching for relations: a page of generations with their avatars, products and
 * brands costs one query per relation, whatever the page size. The services' batch reads do the
 * work and the team scoping; this only groups keys and hands rows back in order.
 */
export function createLoaders(services: Pick<Services, 'adLibrary' | 'products' | 'brands' | 'voiceovers' | 'avatars' | 'generationReader'>, principal: Principal | undefined) {
  const p = principal ?? NO_TEAM;
  const adLibraryAdMedia = new DataLoader<string, AdLibraryMediaItem[] | null>(async (ids) =>
    byId(await services.adLibrary.adMediaByIds(ids), ids).map((r) => r?.media ?? null),
  );
  return {
    /** Listed (scraped) ad-library brands only, as REST's reads. */
    adLibraryBrand: new DataLoader<string, AdLibraryBrandRow | null>(async (ids) => byId(await services.adLibrary.brandsByIds(ids), ids)),
    /** An ad's stored media items (source URL and storage key), for its `media` field. */
    adLibraryAdMedia,
    /** One page of each brand's ads for a page of brands: two queries per distinct page size. Primes adLibraryAdMedia. */
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
            for (const [brandId, adPage] of await services.adLibrary.adsOfBrands(brandIds, page)) {
              found.set(`${brandId}:${g}`, adPage);
              for (const row of adPage.rows) adLibraryAdMedia.prime(row.id, row.media);
            }
          }),
        );
        return keys.map((k) => found.get(`${k.brandId}:${k.limit}:${k.offset}`)!);
      },
      { cacheKeyFn: (k) => `${k.brandId}:${k.limit}:${k.offset}` },
    ),
    product: new DataLoader<string, ProductRow | null>(async (ids) => byId(await services.products.findByIds(p, ids), ids)),
    brand: new DataLoader<string, BrandRow | null>(async (ids) => byId(await services.brands.findByIds(p, ids), ids)),
    voiceover: new DataLoader<string, VoiceoverRow | null>(async (ids) => byId(await services.voiceovers.findByIds(p, ids), ids)),
    avatar: new DataLoader<string, AvatarRow | null>(async (ids) => byId(await services.avatars.findVisibleByIds(p, ids), ids)),
    webhookDeliveriesOfGeneration: new DataLoader<string, WebhookDeliveryRow[]>(async (ids) =>
      groupedBy(await services.generationReader.webhookDeliveriesOf(p, ids), 'generation_id', ids),
    ),
    upstreamAttemptsOfGeneration: new DataLoader<string, UpstreamAttempt[]>(async (ids) =>
      groupedBy(await services.generationReader.upstreamOf(p, ids), 'generation_id', ids),
    ),
    productIdsOfGeneration: new DataLoader<string, string[]>(async (ids) =>
      groupedBy(await services.generationReader.productLinksOf(p, ids), 'generation_id', ids).map((links) => links.map((l) => l.product_id)),
    ),
  };
}
export type Loaders = ReturnType<typeof createLoaders>;
