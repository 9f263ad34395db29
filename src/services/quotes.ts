import { isVoiceOperation, type Operation } from '../domain/operations.ts';
import type { Principal } from './principal.ts';
import type { CreditService } from './credits.ts';
import type { GenerationCreator } from './generations/create.ts';
import type { VoiceoverService } from './voiceovers.ts';
import type { AdLibraryScraper } from './ad-library/scrape.ts';

/** What can be priced before it is made: every operation of the table (the generations and the voiceovers) and a scrape. */
export type Quotable = Operation | 'ad-library-scrape';

/**
 * What a quote takes from the key's bucket: a speech-to-speech quote downloads its source (up to
 * 25 MiB) and probes it to price it, the work of a write; the others read the database only.
 */
export const quoteRateCost = (what: Quotable): 'read' | 'write' => (what === 'speech-to-speech' ? 'write' : 'read');

export interface Quote {
  credits: number;
  credits_remaining: number;
  affordable: boolean;
}

/**
 * A price before paying: exactly the create's body, its validation, lookups and refusals, and its
 * pricing, with nothing stored or charged. The balance is read after the price, so `affordable`
 * says whether the create would pass its credits check at this moment.
 */
export function createQuoteService(
  creator: Pick<GenerationCreator, 'price'>,
  voiceovers: Pick<VoiceoverService, 'price'>,
  scraper: Pick<AdLibraryScraper, 'price'>,
  credits: Pick<CreditService, 'balance'>,
) {
  return {
    async quote(p: Principal, what: Quotable, body: unknown): Promise<Quote> {
      const price =
        what === 'ad-library-scrape'
          ? await scraper.price(body)
          : isVoiceOperation(what)
            ? await voiceovers.price(what, body, p.teamId)
            : await creator.price(p, what, body);
      const { credits_remaining } = await credits.balance(p);
      return { credits: price, credits_remaining, affordable: price <= credits_remaining };
    },
  };
}
