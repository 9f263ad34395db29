import { pageQuery } from '../../../domain/inputs.ts';
import { scrapeInput } from '../../../services/ad-library/scrape.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';
import { adLibraryBrandSchema, adListItemSchema, adSchema, idParams, page, scrapeExisting, scrapeJobSchema, scrapeStarted } from './responses.ts';
import { routeUsing } from './route.ts';

const route = routeUsing('adLibrary', 'adLibraryScraper');

const tag = 'Ad library';

export const adLibraryRoutes = [
  route({
    method: 'POST',
    path: '/ad-library/scrape',
    operationId: 'scrapeAdLibrary',
    tag,
    summary: "Scrape a brand's active and inactive ads from its ad-library page",
    description: 'At most 3 requests per minute per team. Completion shows in `GET /ad-library/brands` (or `GET /ad-library/scrape/{id}`).',
    body: scrapeInput,
    idempotent: true,
    responses: {
      202: { description: 'A scrape started (or already running for this page)', schema: scrapeStarted },
      200: { description: 'Already scraped', schema: scrapeExisting },
    },
    errors: ['validation_error', 'insufficient_credits', 'rate_limited', 'conflict'],
    handler: async (s, req, reply) => {
      const outcome = await s.adLibraryScraper.scrape(req.principal, req.body, idempotencyOf(req));
      reply.headers(outcome.headers);
      return sendOutcome(reply, outcome);
    },
  }),
  route({
    method: 'GET',
    path: '/ad-library/scrape/:id',
    operationId: 'getScrapeJob',
    tag,
    summary: 'One scrape job',
    params: idParams,
    responses: { 200: { description: 'The job', schema: scrapeJobSchema } },
    errors: ['validation_error', 'not_found'],
    handler: (s, req) => s.adLibrary.job(req.params.id),
  }),
  route({
    method: 'GET',
    path: '/ad-library/brands',
    operationId: 'listAdLibraryBrands',
    tag,
    summary: 'Scraped brands (all teams)',
    query: pageQuery,
    responses: { 200: { description: 'A page of brands', schema: page(adLibraryBrandSchema) } },
    errors: ['validation_error'],
    handler: (s, req) => s.adLibrary.brands(req.query),
  }),
  route({
    method: 'GET',
    path: '/ad-library/brands/:id',
    operationId: 'getAdLibraryBrand',
    tag,
    summary: 'One scraped brand',
    params: idParams,
    responses: { 200: { description: 'The brand', schema: adLibraryBrandSchema } },
    errors: ['validation_error', 'not_found'],
    handler: (s, req) => s.adLibrary.brand(req.params.id),
  }),
  route({
    method: 'GET',
    path: '/ad-library/brands/:id/ads',
    operationId: 'listAdLibraryBrandAds',
    tag,
    summary: "A brand's ads, newest start date first",
    params: idParams,
    query: pageQuery,
    responses: { 200: { description: 'A page of ads', schema: page(adListItemSchema) } },
    errors: ['validation_error', 'not_found'],
    handler: (s, req) => s.adLibrary.brandAds(req.params.id, req.query),
  }),
  route({
    method: 'GET',
    path: '/ad-library/ads/:id',
    operationId: 'getAdLibraryAd',
    tag,
    summary: 'One ad, its media as our stored copies',
    params: idParams,
    responses: { 200: { description: 'The ad', schema: adSchema } },
    errors: ['validation_error', 'not_found'],
    handler: (s, req) => s.adLibrary.ad(req.params.id),
  }),
];
