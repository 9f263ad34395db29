import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, startTestService, type TestService } from '../support/app.ts';
import { waitUntil, type LongRunning } from '../support/cli-run.ts';
import { FIXTURE_PAGE_ID, startMetaAdLibraryFake, type MetaAdLibraryFake } from '../support/meta-ad-library-fake.ts';

// Real `adforge worker` processes SIGKILLed part-way through a scrape: ScrapeCreators bills every call.
const TOKEN = 'kill-source-token';
let fake: MetaAdLibraryFake;
let svc: TestService;
let env: Record<string, string>;
const children: LongRunning[] = [];

beforeAll(async () => {
  fake = await startMetaAdLibraryFake({ token: TOKEN });
  env = { AD_LIBRARY_SOURCE_URL: fake.baseUrl, AD_LIBRARY_SOURCE_TOKEN: TOKEN, AD_LIBRARY_SOURCE_BACKOFF_MS: '10' };
  svc = await startTestService(env);
}, 120_000);
const stopWorkers = async () => {
  for (const c of children) if (c.running()) c.child.kill('SIGKILL');
  await Promise.all(children.splice(0).map((c) => c.waitForExit(5_000)));
};
afterEach(async () => {
  await stopWorkers();
  fake.control.delayMs = 0;
  delete fake.control.delayOnPage;
  fake.control.mediaDelayMs = 0;
});
afterAll(async () => {
  await stopWorkers();
  await svc?.close();
  await fake?.close();
});

function worker() {
  const c = spawnWorker(svc, env);
  children.push(c);
  return c;
}

let nextPage = 0;
/** A fresh page id with the fixture's three pages of results. */
function newPage(): string {
  const pageId = String(4_000_000_000 + ++nextPage);
  const pages = JSON.parse(JSON.stringify(fake.control.pages.get(FIXTURE_PAGE_ID))) as Array<Array<Record<string, any>>>;
  let n = 0;
  for (const record of pages.flat()) {
    // A record without an id stays without one (the fixture's record the source gives no id: not an ad).
    if (record.ad_archive_id !== undefined) record.ad_archive_id = `${pageId}0${n++}`;
    if (record.page_id !== undefined) record.page_id = pageId;
    if (record.snapshot?.page_id !== undefined) record.snapshot.page_id = pageId;
  }
  fake.control.pages.set(pageId, pages);
  return pageId;
}
const pageUrl = (id: string) => `https://www.facebook.com/ads/library/?active_status=all&ad_type=all&country=ALL&view_all_page_id=${id}`;

async function scrapeJob(key: string, id: string, timeoutMs = 60_000): Promise<any> {
  let job: any;
  await waitUntil(async () => {
    job = (await svc.api('GET', `/api/v1/ad-library/scrape/${id}`, { key })).body;
    return job.status !== 'processing';
  }, timeoutMs, `scrape ${id} to end`);
  return job;
}
const creditsUsed = async (teamId: string) => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow()).credits_used;

describe('a worker SIGKILLed during a scrape', () => {
  it("while it stores a page's ads: the next worker stores them from the kept answer and goes on; every page is paid once", async () => {
    const pageId = newPage();
    const t = await svc.team({ credits: 100 });
    fake.control.mediaDelayMs = 60_000;
    const first = worker();
    const res = await svc.api('POST', '/api/v1/ad-library/scrape', { key: t.key, body: { url: pageUrl(pageId) } });
    const media = () => fake.requests.filter((r) => r.path.startsWith('/media/'));
    await waitUntil(async () => media().length > 0, 30_000, 'the first page answered and its media asked for');
    first.child.kill('SIGKILL');
    await first.exited;
    fake.control.mediaDelayMs = 0;

    worker();
    const job = await scrapeJob(t.key, res.body.job_id);
    expect(job).toMatchObject({ status: 'completed', ads_count: 5, error: null });
    expect(fake.billed.filter((b) => b.pageId === pageId).map((b) => b.page)).toEqual([0, 1, 2]);
    expect(await creditsUsed(t.teamId)).toBe(10);
  }, 120_000);

  it('while the source answers a page: the next worker does not ask it again; the scrape fails and is refunded, the ads read kept', async () => {
    const pageId = newPage();
    const t = await svc.team({ credits: 100 });
    fake.control.delayMs = 60_000;
    fake.control.delayOnPage = 1;
    const first = worker();
    const res = await svc.api('POST', '/api/v1/ad-library/scrape', { key: t.key, body: { url: pageUrl(pageId) } });
    const billed = () => fake.billed.filter((b) => b.pageId === pageId).map((b) => b.page);
    await waitUntil(async () => billed().length === 2, 30_000, 'the second page to be made at the source');
    first.child.kill('SIGKILL');
    await first.exited;
    fake.control.delayMs = 0;

    worker();
    const job = await scrapeJob(t.key, res.body.job_id);
    expect(job.status).toBe('failed');
    expect(job.error).toBe('the scrape was interrupted while a page of results was asked of the source; it was not asked again, since the source bills every call');
    expect(billed()).toEqual([0, 1]);
    expect(await creditsUsed(t.teamId)).toBe(0);
    const stored = await svc.app.db.selectFrom('ad_library_ads').select('ad_archive_id').where('ad_archive_id', 'like', `${pageId}0%`).execute();
    expect(stored).toHaveLength(2);
  }, 120_000);
});
