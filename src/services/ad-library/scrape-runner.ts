import pLimit from 'p-limit';
import { AdSourceError, isAdSourceError, type AdSource, type SourceBrand, type SourcePage } from '../../domain/ad-source.ts';
import type { AdLibraryMediaItem, ScrapeJobRow } from '../../db/types.ts';
import { endScrapeJob, findJob, lockScrapePage, markBrandScraped, keepScrapeAnswer, markScrapeAsking, recordScrapePage, setScrapeJobBrand, upsertAd, upsertBrand } from '../../repositories/ad-library.ts';
import { notifyScrapeChanged } from '../../repositories/notifications.ts';
import { refundCredits } from '../../repositories/credits.ts';
import { appendLedger } from '../../repositories/ledger.ts';
import type { Deps } from '../deps.ts';
import { copyMedia } from './media.ts';

/** Media files fetched at once per scrape: the source's CDN is shared with everyone else's. */
const MEDIA_CONCURRENCY = 4;
const INTERRUPTED = 'the scrape was interrupted while a page of results was asked of the source; it was not asked again, since the source bills every call';

export function createScrapeRunner(deps: Pick<Deps, 'db' | 'storage' | 'config' | 'log'>, source: AdSource) {
  const { db, storage, config, log } = deps;
  const mediaDeps = { storage, allowPrivate: config.allowPrivateNetworkUrls, maxBytes: config.adLibrary.maxMediaBytes };

  async function finish(job: ScrapeJobRow, outcome: { status: 'completed'; brandId: string; ads: number } | { status: 'failed'; error: string }) {
    await db.transaction().execute(async (trx) => {
      await lockScrapePage(trx, job.meta_page_id);
      const ended = await endScrapeJob(
        trx,
        job.id,
        outcome.status === 'completed' ? { status: 'completed', ads_count: outcome.ads, brand_id: outcome.brandId } : { status: 'failed', error: outcome.error },
      );
      if (!ended) return; // already ended by an earlier attempt: never refunded twice
      if (outcome.status === 'completed') {
        await markBrandScraped(trx, outcome.brandId);
      } else {
        await refundCredits(trx, job.team_id, job.credits);
        await appendLedger(trx, { team_id: job.team_id, kind: 'refund', amount: -job.credits, subject_type: 'ad_library_scrape', subject_id: job.id });
      }
      await notifyScrapeChanged(trx, { id: job.id, status: outcome.status });
    });
  }

  const skip = (job: ScrapeJobRow, url: string) => (why: string) => log.warn({ job_id: job.id, url, why }, 'ad-library media not copied');

  /**
   * A page of results asked of the source: marked as asked before it is sent, and its answer kept
   * as soon as it comes, so a stopped worker's page is never asked again nor its answer lost.
   */
  async function ask<T extends SourcePage>(job: ScrapeJobRow, read: () => Promise<T>): Promise<T> {
    await markScrapeAsking(db, job.id);
    const answer = await read();
    await keepScrapeAnswer(db, job.id, answer);
    return answer;
  }

  async function storeBrand(job: ScrapeJobRow, profile: SourceBrand): Promise<string> {
    const pictureKey = profile.profilePictureUrl
      ? await copyMedia(mediaDeps, profile.profilePictureUrl, `ad-library/brands/${job.meta_page_id}/profile`, skip(job, profile.profilePictureUrl))
      : null;
    // Filed under the page asked for: "existing", the running job and the listing all go by it,
    // whatever id the source's records carry (a page that moved to a new id, say).
    const brand = await upsertBrand(db, { ...profile, metaPageId: job.meta_page_id }, { sourceUrl: profile.profilePictureUrl, key: pictureKey });
    await setScrapeJobBrand(db, job.id, brand.id);
    return brand.id;
  }

  /**
   * Every page of results from where the job stands: the first (and the brand with it) for a new
   * job; for one an earlier attempt left, the answer it kept, else the page its cursor names. A
   * page asked by an attempt that stopped before its answer was kept may be paid: the scrape fails
   * instead of asking again.
   */
  async function scrape(job: ScrapeJobRow, signal: AbortSignal): Promise<{ brandId: string; ads: number }> {
    if (job.source_asking) throw new AdSourceError('failed', INTERRUPTED);
    let brandId = job.brand_id;
    let count = job.ads_count;
    let page = (job.source_page ?? undefined) as (SourcePage & { brand?: SourceBrand }) | undefined;
    if (!page && !brandId) page = await ask(job, () => source.first(job.meta_page_id, signal));
    else if (!page && job.source_cursor) {
      const cursor = job.source_cursor;
      page = await ask(job, () => source.page(job.meta_page_id, cursor, signal));
    }
    if (!brandId) {
      if (!page?.brand) throw new AdSourceError('failed', 'the scrape lost the first page of results it had kept');
      brandId = await storeBrand(job, page.brand);
    }
    const limit = pLimit(MEDIA_CONCURRENCY);
    // The source may give an ad twice (on two result pages, or twice in one): it is one ad, stored
    // and counted once, and never written by two upserts at the same time.
    const seen = new Set<string>();
    const cursors = new Set<string>();
    while (page) {
      const room = config.adLibrary.maxAds - count;
      const fresh = page.ads.filter((ad) => !seen.has(ad.adArchiveId) && seen.add(ad.adArchiveId));
      const ads = fresh.slice(0, room);
      const into = brandId;
      await Promise.all(
        ads.map(async (ad) => {
          const media: AdLibraryMediaItem[] = await Promise.all(
            ad.media.map((m, i) =>
              limit(async () => ({ type: m.type, url: m.url, key: await copyMedia(mediaDeps, m.url, `ad-library/ads/${ad.adArchiveId}/${i}`, skip(job, m.url)) })),
            ),
          );
          await upsertAd(db, into, ad, media);
        }),
      );
      count += ads.length;
      const full = count >= config.adLibrary.maxAds;
      if (full) log.info({ job_id: job.id, max: config.adLibrary.maxAds }, 'ad-library scrape stopped at AD_LIBRARY_MAX_ADS');
      // A cursor handed out twice would loop forever: the source has nothing further to give.
      const next = full || !page.next || cursors.has(page.next) ? null : page.next;
      await recordScrapePage(db, job.id, { next, adsCount: count });
      if (!next) break;
      cursors.add(next);
      page = await ask(job, () => source.page(job.meta_page_id, next, signal));
    }
    return { brandId, ads: count };
  }

  return {
    /**
     * Reads the page's brand and every ad (upserted as they arrive, so a rerun duplicates nothing)
     * and ends the job. A source failure ends it as failed with a refund at once; anything else is
     * thrown for graphile-worker to retry, and the last attempt fails and refunds too. A rerun goes
     * on from the page the job recorded: no page of results is paid for twice.
     */
    async run(jobId: string, attempt: { number: number; max: number }, signal: AbortSignal): Promise<void> {
      const job = await findJob(db, jobId);
      if (!job || job.status !== 'processing') return;
      try {
        const { brandId, ads } = await scrape(job, signal);
        await finish(job, { status: 'completed', brandId, ads });
      } catch (e) {
        if (signal.aborted) throw e;
        const last = attempt.number >= attempt.max;
        if (!isAdSourceError(e) && !last) throw e;
        log.warn({ err: e, job_id: job.id }, 'ad-library scrape failed');
        await finish(job, { status: 'failed', error: isAdSourceError(e) ? e.message : 'the scrape failed; the credits were refunded' });
      }
    },
  };
}
export type ScrapeRunner = ReturnType<typeof createScrapeRunner>;
