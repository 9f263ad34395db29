import { pageQuery as pageSchema } from '../../../domain/inputs.ts';
import { parseInput } from '../../../domain/validate.ts';
import { eventsOrTicks, subscribeScrapeEvents } from '../../../events/scrape-events.ts';
import { adListItemView, brandView, type AdLibraryAd, type AdLibraryAdListItem, type AdLibraryBrand, type ScrapeJob } from '../../../services/ad-library/views.ts';
import { paginated } from '../../../services/paginated.ts';
import { builder } from '../builder.ts';
import { QuoteRef } from './quote.ts';
import { liveSubscription, principalOf, servicesFor, type GraphQLContext } from '../request-context.ts';
import { errorTypes } from './errors.ts';
import { idempotencyFor, unwrapOutcome } from './idempotency.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';
import { notFoundAsNull } from './visibility.ts';

const services = servicesFor('storage', 'adLibrary', 'adLibraryScraper', 'quotes');

/**
 * The competitor ad library: shared by every team (any valid key reads every brand, ad and scrape
 * job), paid per new scrape. Reads go through the same services as REST /ad-library, so fields,
 * order, paging and errors agree; an unknown id reads as null (REST's 404).
 */

/** While a scrape runs, its job is re-read this often too, in case its end event was missed. */
const SCRAPE_RECHECK_MS = 15_000;

/** A listed brand (`ads` batches per page of brands), by a loader, signed like REST. */
async function listedBrand(ctx: GraphQLContext, id: string | null): Promise<AdLibraryBrand | null> {
  if (!id) return null;
  const row = await ctx.loaders.adLibraryBrand.load(id);
  return row && brandView(services(ctx).storage, row);
}

interface MediaItem {
  type: string;
  url: string;
  key: string | null;
}

const AdLibraryMediaRef = builder.objectRef<MediaItem>('AdLibraryMedia').implement({
  description:
    'One image or video of an ad. Both links are on every item: `url` is what REST lists show, `r2_url` what REST GET /ad-library/ads/{id} shows',
  fields: (t) => ({
    type: t.exposeString('type', { description: '`image` or `video`' }),
    url: t.exposeString('url', { description: "The source's own link, as scraped; it may expire or vanish upstream" }),
    r2_url: t.string({
      nullable: true,
      description: 'Signed link to our stored copy, valid 1 hour (signed anew on each read); null when the file could not be copied',
      resolve: (m, _a, ctx) => (m.key ? services(ctx).storage.signedUrl(m.key) : null),
    }),
  }),
});

type AdParent = AdLibraryAdListItem | AdLibraryAd;

export const AdLibraryAdRef = builder.objectRef<AdParent>('AdLibraryAd').implement({
  description: 'A scraped ad (spec: Ad-library ad)',
  fields: (t) => ({
    id: t.exposeID('id'),
    brand_id: t.exposeID('brand_id'),
    ad_archive_id: t.exposeString('ad_archive_id'),
    is_active: t.exposeBoolean('is_active'),
    start_date: t.field({ type: 'DateTime', resolve: (a) => a.start_date }),
    end_date: t.field({ type: 'DateTime', nullable: true, resolve: (a) => a.end_date }),
    body_text: t.exposeString('body_text'),
    title: t.exposeString('title'),
    cta_text: t.exposeString('cta_text'),
    cta_type: t.exposeString('cta_type', { description: 'An uppercase code' }),
    link_url: t.exposeString('link_url'),
    display_format: t.exposeString('display_format'),
    publisher_platforms: t.exposeStringList('publisher_platforms'),
    media: t.field({
      type: [AdLibraryMediaRef],
      description: 'In the order of the source; `url` and `r2_url` on each item (see AdLibraryMedia)',
      resolve: async (a, _args, ctx) => (await ctx.loaders.adLibraryAdMedia.load(a.id)) ?? [],
    }),
    thumbnail_url: t.exposeString('thumbnail_url'),
    eu_total_reach: t.exposeInt('eu_total_reach'),
    created_at: t.field({ type: 'DateTime', resolve: (a) => a.created_at }),
    brand: t.field({
      type: AdLibraryBrandRef,
      nullable: true,
      description: 'The brand the ad belongs to',
      resolve: (a, _args, ctx) => listedBrand(ctx, a.brand_id),
    }),
  }),
});

const AdLibraryAdPage = pageOf<AdParent>('AdLibraryAdPage', AdLibraryAdRef);

export const AdLibraryBrandRef = builder.objectRef<AdLibraryBrand>('AdLibraryBrand');
AdLibraryBrandRef.implement({
  description: 'A scraped brand page (spec: Ad-library brand), not one of the team brands',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    meta_page_id: t.exposeString('meta_page_id'),
    page_url: t.exposeString('page_url'),
    about: t.exposeString('about'),
    profile_picture_url: t.exposeString('profile_picture_url', {
      nullable: true,
      description: 'Signed link to our copy of the picture, valid 1 hour; null when there is none',
    }),
    page_categories: t.exposeStringList('page_categories'),
    page_like_count: t.exposeInt('page_like_count'),
    created_at: t.field({ type: 'DateTime', resolve: (b) => b.created_at }),
    ads: t.field({
      type: AdLibraryAdPage,
      description: 'Its ads, newest start date first, paged like REST GET /ad-library/brands/{id}/ads',
      args: pageArgs(t),
      resolve: async (b, args, ctx) => {
        const page = parseInput(pageSchema, pageQuery(args));
        const { rows, total } = await ctx.loaders.adLibraryAdsOfBrand.load({ brandId: b.id, ...page });
        return paginated(rows.map(adListItemView), total, page);
      },
    }),
  }),
});

const AdLibraryBrandPage = pageOf<AdLibraryBrand>('AdLibraryBrandPage', AdLibraryBrandRef);

export const ScrapeJobRef = builder.objectRef<ScrapeJob>('ScrapeJob').implement({
  description: 'A scrape of one brand page, as REST GET /ad-library/scrape/{id} shows it',
  fields: (t) => ({
    job_id: t.exposeID('job_id'),
    status: t.exposeString('status', { description: '`processing`, then `completed` or `failed`' }),
    meta_page_id: t.exposeString('meta_page_id'),
    brand_id: t.exposeID('brand_id', { nullable: true, description: 'Set once the brand page has been read' }),
    ads_count: t.exposeInt('ads_count', { description: 'Ads stored, once completed' }),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed (its credits were refunded)' }),
    created_at: t.field({ type: 'DateTime', resolve: (j) => j.created_at }),
    completed_at: t.field({ type: 'DateTime', nullable: true, resolve: (j) => j.completed_at }),
    brand: t.field({
      type: AdLibraryBrandRef,
      nullable: true,
      description: 'The brand, once `brand_id` is set and the brand is listed (a first scrape lists it when it completes)',
      resolve: (j, _a, ctx) => listedBrand(ctx, j.brand_id),
    }),
  }),
});

interface Started {
  job_id: string | null;
  status: 'processing' | 'existing';
  brand_id?: string;
}

const ScrapeStartedRef = builder.objectRef<Started>('ScrapeStarted').implement({
  description: 'The answer of REST POST /ad-library/scrape, with the job and the brand one field away',
  fields: (t) => ({
    job_id: t.exposeID('job_id', {
      nullable: true,
      description: 'The new or running job (`processing`), or the scrape that made the brand (`existing`)',
    }),
    status: t.exposeString('status', {
      description: '`processing`: a job is running (new and charged, or already running: not charged again); `existing`: scraped lately, no job, no charge',
    }),
    brand_id: t.id({ nullable: true, description: 'Only when `existing`', resolve: (s) => s.brand_id ?? null }),
    job: t.field({
      type: ScrapeJobRef,
      nullable: true,
      resolve: (s, _a, ctx) => (s.job_id ? notFoundAsNull(() => services(ctx).adLibrary.job(s.job_id)) : null),
    }),
    brand: t.field({
      type: AdLibraryBrandRef,
      nullable: true,
      description: 'Only when `existing`',
      resolve: (s, _a, ctx) => listedBrand(ctx, s.brand_id ?? null),
    }),
  }),
});

builder.queryFields((t) => ({
  adLibraryBrands: t.field({
    type: AdLibraryBrandPage,
    description: 'Scraped brands of every team, newest first (REST GET /ad-library/brands)',
    args: pageArgs(t),
    resolve: (_r, args, ctx) => {
      principalOf(ctx);
      return services(ctx).adLibrary.brands(pageQuery(args));
    },
  }),
  adLibraryBrand: t.field({
    type: AdLibraryBrandRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => {
      principalOf(ctx);
      return notFoundAsNull(() => services(ctx).adLibrary.brand(String(id)));
    },
  }),
  adLibraryAds: t.field({
    type: AdLibraryAdPage,
    nullable: true,
    description: 'Ads of a brand, newest start date first (REST GET /ad-library/brands/{id}/ads); null for an unknown brand',
    args: { brand_id: t.arg.id({ required: true }), ...pageArgs(t) },
    resolve: (_r, args, ctx) => {
      principalOf(ctx);
      return notFoundAsNull(() => services(ctx).adLibrary.brandAds(String(args.brand_id), pageQuery(args)));
    },
  }),
  adLibraryAd: t.field({
    type: AdLibraryAdRef,
    nullable: true,
    description: 'One ad (REST GET /ad-library/ads/{id})',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => {
      principalOf(ctx);
      return notFoundAsNull(() => services(ctx).adLibrary.ad(String(id)));
    },
  }),
  scrapeJob: t.field({
    type: ScrapeJobRef,
    nullable: true,
    description: 'A scrape job, whichever team started it (REST GET /ad-library/scrape/{id})',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => {
      principalOf(ctx);
      return notFoundAsNull(() => services(ctx).adLibrary.job(String(id)));
    },
  }),
}));

builder.mutationFields((t) => ({
  scrapeAdLibrary: t.field({
    type: ScrapeStartedRef,
    errors: errorTypes,
    description:
      'REST POST /ad-library/scrape: 10 credits for a new job only. At most 3 a minute per team; the 4th is an AppError `rate_limited` whose message says how many seconds to wait',
    args: {
      url: t.arg.string({ required: true, description: "Ad-library URL of a brand page (with view_all_page_id)" }),
      idempotencyKey: t.arg.string(),
    },
    resolve: async (_r, { url, idempotencyKey }, ctx) =>
      unwrapOutcome<Started>(
        await services(ctx).adLibraryScraper.scrape(principalOf(ctx), { url }, idempotencyFor('scrapeAdLibrary', idempotencyKey)),
      ),
  }),
}));

builder.queryFields((t) => ({
  quoteAdLibraryScrape: t.field({
    type: QuoteRef,
    errors: errorTypes,
    description: 'What scrapeAdLibrary(url) would charge now: 0 for a page scraped recently or being scraped',
    args: { url: t.arg.string({ required: true }) },
    resolve: (_r, { url }, ctx) => services(ctx).quotes.quote(principalOf(ctx), 'ad-library-scrape', { url }),
  }),
}));

builder.subscriptionFields((t) => ({
  scrapeJobUpdated: t.field({
    type: ScrapeJobRef,
    description: 'The scrape job now, then on every change; ends once it has completed or failed',
    args: { job_id: t.arg.id({ required: true }) },
    subscribe: (_r, { job_id }, ctx) =>
      liveSubscription(ctx, (onEnd) => (async function* () {
        const id = String(job_id);
        const events = subscribeScrapeEvents(ctx.events, { jobId: id });
        onEnd(() => events.return());
        try {
          // Listening before the first read: an end between the two is still seen.
          await events.ready;
          let current = await services(ctx).adLibrary.job(id);
          yield current;
          const next = eventsOrTicks(events, SCRAPE_RECHECK_MS);
          while (current.status === 'processing') {
            const why = await next();
            if (why === 'closed') return;
            const read = await services(ctx).adLibrary.job(id);
            if (why === 'tick' && JSON.stringify(read) === JSON.stringify(current)) continue;
            current = read;
            yield current;
          }
        } finally {
          await events.return();
        }
      })()),
    resolve: (j: ScrapeJob) => j,
  }),
}));
