import { z } from 'zod';
import { parseAdLibraryUrl } from '../../domain/ad-library-url.ts';
import { AppError } from '../../domain/errors.ts';
import { AD_LIBRARY_SCRAPE_CREDITS } from '../../domain/pricing.ts';
import { rateLimitHeaders, SCRAPE_RATE_LIMIT } from '../../domain/rate-limit.ts';
import { parseInput } from '../../domain/validate.ts';
import { findFreshBrand, findRunningJob, insertScrapeJob, lastCompletedJob, lockScrapePage } from '../../repositories/ad-library.ts';
import { debitCredits } from '../../repositories/credits.ts';
import { queueJob } from '../../jobs/define.ts';
import { scrapeAdLibraryJob } from '../../jobs/scrape-ad-library.ts';
import { appendLedger } from '../../repositories/ledger.ts';
import { takeRateLimitSlot } from '../../repositories/rate-limits.ts';
import type { Deps } from '../deps.ts';
import type { Principal } from '../principal.ts';
import { requestHash, runIdempotent, type IdempotencyRequest, type RecordedOutcome } from '../idempotency.ts';

export const scrapeInput = z.object({ url: z.string({ error: 'is required' }).trim().min(1, 'must not be empty').max(2048, 'must be at most 2048 characters') });

export function createAdLibraryScraper({ db, config }: Pick<Deps, 'db' | 'config'>) {
  return {
    /**
     * What the scrape of this body would charge now: nothing for a page scraped recently (its
     * brand is answered) or being scraped (its job is answered), else a new scrape's price. It takes
     * no rate-limit slot and stores nothing.
     */
    async price(body: unknown): Promise<number> {
      const { url } = parseInput(scrapeInput, body ?? undefined);
      const parsed = parseAdLibraryUrl(url);
      if (!parsed.ok) throw new AppError('validation_error', parsed.message);
      if (await findFreshBrand(db, parsed.pageId, config.adLibrary.freshHours)) return 0;
      if (await findRunningJob(db, parsed.pageId)) return 0;
      return AD_LIBRARY_SCRAPE_CREDITS;
    },

    /**
     * One transaction: the rate limit slot, then `existing` (a fresh brand), or the running job of
     * the page (whoever started it), or a new job paid with 10 credits. A transaction lock per page
     * keeps two teams from starting the same page at once. Returns the rate-limit headers too.
     */
    async scrape(p: Principal, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome & { headers: Record<string, string> }> {
      const { url } = parseInput(scrapeInput, body ?? undefined);
      const parsed = parseAdLibraryUrl(url);
      if (!parsed.ok) throw new AppError('validation_error', parsed.message);
      let headers: Record<string, string> = {};
      const scope = idem ? { teamId: p.teamId, ...idem } : undefined;
      const outcome = await runIdempotent(db, scope, requestHash(body), async (trx) => {
        const decision = await takeRateLimitSlot(trx, p.teamId, SCRAPE_RATE_LIMIT);
        headers = rateLimitHeaders(SCRAPE_RATE_LIMIT, decision);
        if (!decision.allowed) {
          throw new AppError(
            'rate_limited',
            `Too many scrape requests: at most ${SCRAPE_RATE_LIMIT.limit} per minute; retry in ${decision.retryAfterSeconds} s`,
            headers,
          );
        }
        await lockScrapePage(trx, parsed.pageId);
        const fresh = await findFreshBrand(trx, parsed.pageId, config.adLibrary.freshHours);
        if (fresh) {
          const job = await lastCompletedJob(trx, parsed.pageId);
          return { status: 200, body: { job_id: job?.id ?? null, status: 'existing', brand_id: fresh.id } };
        }
        const running = await findRunningJob(trx, parsed.pageId);
        if (running) return { status: 202, body: { job_id: running.id, status: 'processing' } };

        const debit = await debitCredits(trx, p.teamId, AD_LIBRARY_SCRAPE_CREDITS);
        if (!debit.ok) {
          throw new AppError(
            'insufficient_credits',
            `Not enough credits: a scrape needs ${AD_LIBRARY_SCRAPE_CREDITS} credits and ${debit.available} are available`,
          );
        }
        const job = await insertScrapeJob(trx, { team_id: p.teamId, api_key_id: p.keyId, meta_page_id: parsed.pageId, page_url: parsed.pageUrl, credits: AD_LIBRARY_SCRAPE_CREDITS });
        await appendLedger(trx, { team_id: p.teamId, kind: 'debit', amount: AD_LIBRARY_SCRAPE_CREDITS, subject_type: 'ad_library_scrape', subject_id: job.id });
        await queueJob(trx, scrapeAdLibraryJob, { job_id: job.id });
        return { status: 202, body: { job_id: job.id, status: 'processing' } };
      });
      return { ...outcome, headers: outcome.replayed ? {} : headers };
    },
  };
}
export type AdLibraryScraper = ReturnType<typeof createAdLibraryScraper>;
