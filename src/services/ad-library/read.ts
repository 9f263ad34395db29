import { AppError } from '../../domain/errors.ts';
import { pageQuery } from '../../domain/inputs.ts';
import { parseInput } from '../../domain/validate.ts';
import type { AdLibraryAdRow, AdLibraryBrandRow, AdLibraryMediaItem } from '../../db/types.ts';
import type { Page } from '../../domain/inputs.ts';
import { adMediaByIds, findAd, findBrandsByIds, findJob, findScrapedBrand, listBrandAds, listScrapedBrands, pageOfAdsOfBrands } from '../../repositories/ad-library.ts';
import type { PageOf } from '../../repositories/fetch-page.ts';
import type { Deps } from '../deps.ts';
import { requireUuid } from '../ids.ts';
import { paginated, type Paginated } from '../paginated.ts';
import { adListItemView, adView, brandView, scrapeJobView, type AdLibraryAd, type AdLibraryAdListItem, type AdLibraryBrand, type ScrapeJob } from './views.ts';

/** The library is shared: every team reads every scraped brand and ad; links are signed per read. */
export function createAdLibraryReader({ db, storage }: Pick<Deps, 'db' | 'storage'>) {
  return {
    async brands(query: unknown): Promise<Paginated<AdLibraryBrand>> {
      const page = parseInput(pageQuery, query ?? {});
      const { rows, total } = await listScrapedBrands(db, page);
      return paginated(await Promise.all(rows.map((r) => brandView(storage, r))), total, page);
    },

    async brand(id: unknown): Promise<AdLibraryBrand> {
      const row = await findScrapedBrand(db, requireUuid(id));
      if (!row) throw new AppError('not_found', 'Ad-library brand not found');
      return brandView(storage, row);
    },

    async brandAds(id: unknown, query: unknown): Promise<Paginated<AdLibraryAdListItem>> {
      const brandId = requireUuid(id);
      const page = parseInput(pageQuery, query ?? {});
      if (!(await findScrapedBrand(db, brandId))) throw new AppError('not_found', 'Ad-library brand not found');
      const { rows, total } = await listBrandAds(db, brandId, page);
      return paginated(rows.map(adListItemView), total, page);
    },

    async ad(id: unknown): Promise<AdLibraryAd> {
      const row = await findAd(db, requireUuid(id));
      if (!row) throw new AppError('not_found', 'Ad not found');
      return adView(storage, row);
    },

    // Batch reads for GraphQL relations (one query per batch, whatever its size).

    /** Listed (scraped) brands among `ids`. */
    brandsByIds: (ids: readonly string[]): Promise<AdLibraryBrandRow[]> => findBrandsByIds(db, ids),

    /** The stored media items (source URL and storage key) of the ads among `ids`. */
    adMediaByIds: (ids: readonly string[]): Promise<{ id: string; media: AdLibraryMediaItem[] }[]> => adMediaByIds(db, ids),

    /** One page of each brand's ads, in REST's order. */
    adsOfBrands: (brandIds: readonly string[], page: Page): Promise<Map<string, PageOf<AdLibraryAdRow>>> => pageOfAdsOfBrands(db, brandIds, page),

    async job(id: unknown): Promise<ScrapeJob> {
      const row = await findJob(db, requireUuid(id));
      if (!row) throw new AppError('not_found', 'Scrape job not found');
      return scrapeJobView(row);
    },
  };
}
