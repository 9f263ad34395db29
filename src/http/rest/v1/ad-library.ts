import type { FastifyInstance } from 'fastify';
import type { AdLibraryReader } from '../../../services/ad-library/read.ts';
import type { AdLibraryScraper } from '../../../services/ad-library/scrape.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';

type Id = { Params: { id: string } };

export function adLibraryRoutes(scope: FastifyInstance, deps: { reader: AdLibraryReader; scraper: AdLibraryScraper }): void {
  scope.post('/ad-library/scrape', async (req, reply) => {
    const outcome = await deps.scraper.scrape(req.principal, req.body, idempotencyOf(req));
    reply.headers(outcome.headers);
    return sendOutcome(reply, outcome);
  });
  scope.get<Id>('/ad-library/scrape/:id', (req) => deps.reader.job(req.params.id));
  scope.get('/ad-library/brands', (req) => deps.reader.brands(req.query));
  scope.get<Id>('/ad-library/brands/:id', (req) => deps.reader.brand(req.params.id));
  scope.get<Id>('/ad-library/brands/:id/ads', (req) => deps.reader.brandAds(req.params.id, req.query));
  scope.get<Id>('/ad-library/ads/:id', (req) => deps.reader.ad(req.params.id));
}
