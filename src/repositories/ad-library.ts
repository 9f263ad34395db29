import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { AdLibraryAdRow, AdLibraryBrandRow, AdLibraryMediaItem, ScrapeJobRow } from '../db/types.ts';
import type { Page } from '../domain/inputs.ts';
import type { SourceAd, SourceBrand } from '../domain/ad-source.ts';
import { fetchPage, type PageOf } from './fetch-page.ts';

export function listScrapedBrands(db: Db, page: Page): Promise<PageOf<AdLibraryBrandRow>> {
  const base = db.selectFrom('ad_library_brands').where('scraped_at', 'is not', null);
  return fetchPage(base, (b) => b.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

export function findScrapedBrand(db: Db, id: string): Promise<AdLibraryBrandRow | undefined> {
  return db.selectFrom('ad_library_brands').selectAll().where('id', '=', id).where('scraped_at', 'is not', null).executeTakeFirst();
}

export function findBrandsByIds(db: Db, ids: readonly string[]): Promise<AdLibraryBrandRow[]> {
  if (!ids.length) return Promise.resolve([]);
  return db.selectFrom('ad_library_brands').selectAll().where('id', 'in', ids).where('scraped_at', 'is not', null).execute();
}

export function listBrandAds(db: Db, brandId: string, page: Page): Promise<PageOf<AdLibraryAdRow>> {
  const base = db.selectFrom('ad_library_ads').where('brand_id', '=', brandId);
  return fetchPage(base, (b) => b.selectAll().orderBy('start_date', 'desc').orderBy('id', 'desc'), page);
}

export function findAd(db: Db, id: string): Promise<AdLibraryAdRow | undefined> {
  return db
    .selectFrom('ad_library_ads')
    .innerJoin('ad_library_brands', 'ad_library_brands.id', 'ad_library_ads.brand_id')
    .selectAll('ad_library_ads')
    .where('ad_library_ads.id', '=', id)
    .where('ad_library_brands.scraped_at', 'is not', null)
    .executeTakeFirst();
}

/**
 * Orders everything that decides a page's state, whoever runs it: a scrape request (existing /
 * join / new job) and the end of a job, so a request never sees a job between "running" and
 * "completed" (neither fresh nor running) and pays for a scrape that just finished.
 */
export async function lockScrapePage(trx: Db, metaPageId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`scrape-page:${metaPageId}`}, 0))`.execute(trx);
}

/** A page counts as scraped when a scrape of it completed within `freshHours`. */
export function findFreshBrand(db: Db, metaPageId: string, freshHours: number): Promise<AdLibraryBrandRow | undefined> {
  return db
    .selectFrom('ad_library_brands')
    .selectAll()
    .where('meta_page_id', '=', metaPageId)
    .where('scraped_at', '>', sql<Date>`now() - make_interval(secs => ${freshHours * 3600})`)
    .executeTakeFirst();
}

export function findRunningJob(db: Db, metaPageId: string): Promise<ScrapeJobRow | undefined> {
  return db.selectFrom('ad_library_scrape_jobs').selectAll().where('meta_page_id', '=', metaPageId).where('status', '=', 'processing').executeTakeFirst();
}

export function lastCompletedJob(db: Db, metaPageId: string): Promise<ScrapeJobRow | undefined> {
  return db
    .selectFrom('ad_library_scrape_jobs')
    .selectAll()
    .where('meta_page_id', '=', metaPageId)
    .where('status', '=', 'completed')
    .orderBy('completed_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function findJob(db: Db, id: string): Promise<ScrapeJobRow | undefined> {
  return db.selectFrom('ad_library_scrape_jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Inserts the brand or updates it in place (by meta_page_id); `scraped_at` is left to the job's end. */
export function upsertBrand(db: Db, b: SourceBrand, picture: { sourceUrl: string | null; key: string | null }): Promise<AdLibraryBrandRow> {
  const values = {
    meta_page_id: b.metaPageId,
    name: b.name,
    page_url: b.pageUrl,
    about: b.about,
    profile_picture_source_url: picture.sourceUrl,
    profile_picture_key: picture.key,
    page_categories: b.pageCategories,
    page_like_count: b.pageLikeCount,
    profile_picture_expired_at: null,
  };
  return db
    .insertInto('ad_library_brands')
    .values(values)
    .onConflict((oc) => oc.column('meta_page_id').doUpdateSet({ ...values, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Inserts the ad or updates it in place (by ad_archive_id). */
export async function upsertAd(db: Db, brandId: string, ad: SourceAd, media: AdLibraryMediaItem[]): Promise<void> {
  const values = {
    brand_id: brandId,
    ad_archive_id: ad.adArchiveId,
    is_active: ad.isActive,
    start_date: ad.startDate,
    end_date: ad.endDate,
    body_text: ad.bodyText,
    title: ad.title,
    cta_text: ad.ctaText,
    cta_type: ad.ctaType,
    link_url: ad.linkUrl,
    display_format: ad.displayFormat,
    publisher_platforms: ad.publisherPlatforms,
    media: JSON.stringify(media),
    thumbnail_url: ad.thumbnailUrl,
    eu_total_reach: ad.euTotalReach,
    media_expired_at: null,
  };
  await db
    .insertInto('ad_library_ads')
    .values(values)
    .onConflict((oc) => oc.column('ad_archive_id').doUpdateSet({ ...values, updated_at: sql`now()` }))
    .execute();
}

export function insertScrapeJob(db: Db, j: { team_id: string; api_key_id: string | null; meta_page_id: string; page_url: string; credits: number }): Promise<{ id: string }> {
  return db.insertInto('ad_library_scrape_jobs').values(j).returning('id').executeTakeFirstOrThrow();
}

export async function setScrapeJobBrand(db: Db, jobId: string, brandId: string): Promise<void> {
  await db.updateTable('ad_library_scrape_jobs').set({ brand_id: brandId }).where('id', '=', jobId).execute();
}

/** A page of results is about to be asked of the source: until its answer is kept, its outcome is unknown. */
export async function markScrapeAsking(db: Db, jobId: string): Promise<void> {
  await db.updateTable('ad_library_scrape_jobs').set({ source_asking: true }).where('id', '=', jobId).execute();
}

/** A page's answer, kept until its ads are stored. */
export async function keepScrapeAnswer(db: Db, jobId: string, answer: unknown): Promise<void> {
  await db.updateTable('ad_library_scrape_jobs').set({ source_asking: false, source_page: JSON.stringify(answer) }).where('id', '=', jobId).execute();
}

/** A page's ads are stored: its answer is let go, with the cursor of the next page (null: none) and the ads so far. */
export async function recordScrapePage(db: Db, jobId: string, p: { next: string | null; adsCount: number }): Promise<void> {
  await db.updateTable('ad_library_scrape_jobs').set({ source_page: null, source_cursor: p.next, ads_count: p.adsCount }).where('id', '=', jobId).execute();
}

/** Ends a job still processing; undefined when an earlier attempt already ended it. */
export function endScrapeJob(
  db: Db,
  jobId: string,
  end: { status: 'completed'; ads_count: number; brand_id: string } | { status: 'failed'; error: string },
): Promise<{ id: string } | undefined> {
  return db
    .updateTable('ad_library_scrape_jobs')
    .set({ ...end, completed_at: new Date(), source_page: null, source_asking: false })
    .where('id', '=', jobId)
    .where('status', '=', 'processing')
    .returning('id')
    .executeTakeFirst();
}

export async function markBrandScraped(db: Db, brandId: string): Promise<void> {
  await db.updateTable('ad_library_brands').set({ scraped_at: new Date() }).where('id', '=', brandId).execute();
}

/** The stored media of the ads among `ids` (the library is shared: no team filter). */
export function adMediaByIds(db: Db, ids: readonly string[]): Promise<{ id: string; media: AdLibraryMediaItem[] }[]> {
  if (!ids.length) return Promise.resolve([]);
  return db.selectFrom('ad_library_ads').select(['id', 'media']).where('id', 'in', [...ids]).execute();
}

/**
 * The same page (newest start date first, as listBrandAds) of each brand's ads, for many brands
 * in two queries: the rows ranked per brand, and each brand's total.
 */
export async function pageOfAdsOfBrands(db: Db, brandIds: readonly string[], page: Page): Promise<Map<string, PageOf<AdLibraryAdRow>>> {
  const found = new Map<string, PageOf<AdLibraryAdRow>>(brandIds.map((id) => [id, { rows: [], total: 0 }]));
  if (!brandIds.length) return found;
  const ranked = db
    .selectFrom('ad_library_ads')
    .selectAll()
    .select((eb) => eb.fn.agg<string>('row_number').over((ob) => ob.partitionBy('brand_id').orderBy('start_date', 'desc').orderBy('id', 'desc')).as('rn'))
    .where('brand_id', 'in', [...brandIds]);
  const [rows, counts] = await Promise.all([
    db
      .selectFrom(ranked.as('r'))
      .selectAll()
      .where('rn', '>', String(page.offset))
      .where('rn', '<=', String(page.offset + page.limit))
      .orderBy('brand_id')
      .orderBy('rn')
      .execute(),
    db
      .selectFrom('ad_library_ads')
      .select((eb) => ['brand_id', eb.fn.countAll<string>().as('total')])
      .where('brand_id', 'in', [...brandIds])
      .groupBy('brand_id')
      .execute(),
  ]);
  for (const c of counts) found.get(c.brand_id)!.total = Number(c.total);
  for (const { rn: _rn, ...row } of rows) found.get(row.brand_id)!.rows.push(row);
  return found;
}
