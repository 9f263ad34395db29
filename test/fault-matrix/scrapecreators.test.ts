import { ADS_ROUTE, FIXTURE_PAGE_ID, startMetaAdLibraryFake } from '../support/meta-ad-library-fake.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { runFaultMatrix } from './runner.ts';
import { SCRAPE } from './subjects.ts';

/*
 * ScrapeCreators, the ad library source (its CLI's endpoint list, stored in
 * test/contracts/scrapecreators/): a scrape reads a page's ads page by page, and ScrapeCreators
 * bills every page it answers, the caller there or not (scrapecreators-cli apis.js). A scrape of the
 * fixture's three pages may pay for each once. It takes no idempotency key (n/a).
 */
const TOKEN = 'scrapecreators-matrix-token';
const PAGES = 3;
const scrape = (_: MatrixInputs) => ({ path: '/api/v1/ad-library/scrape', body: { url: `https://www.facebook.com/ads/library/?active_status=all&ad_type=all&country=ALL&view_all_page_id=${FIXTURE_PAGE_ID}` } });

runFaultMatrix({
  provider: 'scrapecreators',
  subject: SCRAPE,
  async start() {
    const source = await startMetaAdLibraryFake({ token: TOKEN });
    return {
      target: source.baseUrl,
      env: (url) => ({
        AD_LIBRARY_SOURCE_URL: url,
        AD_LIBRARY_SOURCE_TOKEN: TOKEN,
        // Every cell scrapes the same page again: none is fresh enough to be answered from the last one.
        AD_LIBRARY_FRESH_HOURS: '0',
        // The source's retries wait inside one job, in real time: the clock cannot move them.
        AD_LIBRARY_SOURCE_BACKOFF_MS: '10',
      }),
      billed: () => ({ scrapecreators: source.billed.length }),
      close: () => source.close(),
    };
  },
  calls: [
    { name: `GET ${ADS_ROUTE} (page 1 of 3)`, method: 'GET', path: new RegExp(`^${ADS_ROUTE}$`), units: { scrapecreators: PAGES }, create: scrape },
    { name: `GET ${ADS_ROUTE} (page 2 of 3)`, method: 'GET', path: new RegExp(`^${ADS_ROUTE}$`), skip: 1, units: { scrapecreators: PAGES }, create: scrape },
  ],
  // ScrapeCreators' error body (apis.js errorResponseExamples).
  errorAnswer: (status) => ({ status, body: { success: false, error: status === 429 ? 'rate_limited' : 'server_error', errorStatus: status, message: `the matrix answered ${status}` } }),
});
