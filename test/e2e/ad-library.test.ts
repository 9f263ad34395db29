import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { FIXTURE_PAGE_ID, startMetaAdLibraryFake, type MetaAdLibraryFake } from '../support/meta-ad-library-fake.ts';

const TOKEN = 'source-token';
let svc: TestService;
let fake: MetaAdLibraryFake;
const pageUrl = (id = FIXTURE_PAGE_ID) => `https://www.facebook.com/ads/library/?active_status=all&ad_type=all&country=ALL&view_all_page_id=${id}`;

beforeAll(async () => {
  fake = await startMetaAdLibraryFake({ token: TOKEN });
  svc = await startTestService(
    { AD_LIBRARY_SOURCE_URL: fake.baseUrl, AD_LIBRARY_SOURCE_TOKEN: TOKEN, AD_LIBRARY_SOURCE_BACKOFF_MS: '10' },
    { worker: true },
  );
});
afterAll(async () => {
  await svc?.close();
  await fake?.close();
});

async function waitForJob(key: string, id: string, timeoutMs = 30_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await svc.api('GET', `/api/v1/ad-library/scrape/${id}`, { key });
    if (res.body.status !== 'processing') return res.body;
    if (Date.now() > until) throw new Error(`scrape ${id} still processing`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a scrape end to end', () => {
  it('charges 10 credits, scrapes every page, and lists the brand and its ads newest first', async () => {
    const t = await svc.team({ credits: 100 });
    const res = await svc.api('POST', '/api/v1/ad-library/scrape', { key: t.key, body: { url: pageUrl() } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'processing' });
    expect(res.headers['ratelimit-limit']).toBe('3');
    expect(res.headers['ratelimit-remaining']).toBe('2');
    const job = await waitForJob(t.key, res.body.job_id);
    expect(job).toMatchObject({ status: 'completed', ads_count: 5, error: null });
    const brands = await svc.api('GET', '/api/v1/ad-library/brands', { key: t.key });
    expect(brands.body.pagination.total).toBe(1);
    const brand = brands.body.data[0];
    expect(brand).toMatchObject({ id: job.brand_id, name: 'Acme Outfitters', meta_page_id: FIXTURE_PAGE_ID, page_like_count: 48213 });
    const ads = await svc.api('GET', `/api/v1/ad-library/brands/${brand.id}/ads?limit=100`, { key: t.key });
    expect(ads.status).toBe(200);
    expect(ads.body.pagination.total).toBe(5);
    const starts = ads.body.data.map((a: any) => a.start_date);
    expect(starts).toEqual([...starts].sort().reverse());
    const one = await svc.api('GET', `/api/v1/ad-library/ads/${ads.body.data[0].id}`, { key: t.key });
    expect(one.status).toBe(200);
    for (const m of one.body.media) expect((await svc.fetchUrl(m.r2_url)).status).toBe(200);
    const used = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(used.credits_used).toBe(10);
    const again = await svc.api('POST', '/api/v1/ad-library/scrape', { key: t.key, body: { url: pageUrl() } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ job_id: res.body.job_id, status: 'existing', brand_id: brand.id });
    const n = await sql<{ n: number }>`select count(*)::int as n from ad_library_scrape_jobs`.execute(svc.app.db);
    expect(n.rows[0]!.n).toBe(1);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// Helpers for the tests below: each test uses its own team and its own page ids.

let nextPage = 0;
/** A fresh page id (10 digits, never the fixture's), registered with the fake unless `register` is false. */
function newPage(opts: { register?: boolean; mutate?: (pages: any[][]) => void } = {}): string {
  nextPage += 1;
  const pageId = String(3_000_000_000 + nextPage);
  if (opts.register !== false) {
    const pages = copyFixturePages(pageId);
    opts.mutate?.(pages);
    fake.control.pages.set(pageId, pages);
  }
  return pageId;
}

/** The fixture's result pages with this page's id and ad_archive_ids of its own (`<pageId>0<n>`). */
function copyFixturePages(pageId: string): any[][] {
  const pages = JSON.parse(JSON.stringify(fake.control.pages.get(FIXTURE_PAGE_ID))) as any[][];
  let n = 0;
  for (const page of pages) {
    for (const record of page) {
      if (record.ad_archive_id !== undefined) record.ad_archive_id = `${pageId}0${n++}`;
      if (record.page_id !== undefined) record.page_id = pageId;
      if (record.snapshot?.page_id !== undefined) record.snapshot.page_id = pageId;
    }
  }
  return pages;
}
const archiveId = (pageId: string, n: number) => `${pageId}0${n}`;

const scrape = (key: string, url: unknown, headers?: Record<string, string>) =>
  svc.api('POST', '/api/v1/ad-library/scrape', { key, body: url === undefined ? {} : { url }, headers });

async function creditsUsed(teamId: string): Promise<number> {
  const row = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow();
  return row.credits_used;
}
async function jobsOfTeam(teamId: string) {
  return svc.app.db.selectFrom('ad_library_scrape_jobs').selectAll().where('team_id', '=', teamId).execute();
}
async function jobsOfPage(pageId: string) {
  return svc.app.db.selectFrom('ad_library_scrape_jobs').selectAll().where('meta_page_id', '=', pageId).execute();
}
async function hitsOf(teamId: string): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from rate_limit_hits where team_id = ${teamId}`.execute(svc.app.db);
  return r.rows[0]!.n;
}
async function ledgerOf(teamId: string) {
  return svc.app.db
    .selectFrom('credit_ledger')
    .select(['kind', 'amount', 'subject_type', 'subject_id'])
    .where('team_id', '=', teamId)
    .orderBy('id')
    .execute();
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until no scrape is running, so a test's jobs never see the next test's fake settings. */
async function settle(timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await sql<{ n: number }>`select count(*)::int as n from ad_library_scrape_jobs where status = 'processing'`.execute(svc.app.db);
    if (r.rows[0]!.n === 0) return;
    if (Date.now() > until) throw new Error('scrapes still running');
    await sleep(50);
  }
}

/** A page scraped to completion by a throwaway team: a page that answers `existing` from now on. */
async function scrapedPage(mutate?: (pages: any[][]) => void): Promise<{ pageId: string; jobId: string; brandId: string }> {
  const pageId = newPage({ mutate });
  const t = await svc.team({ credits: 100 });
  const res = await scrape(t.key, pageUrl(pageId));
  expect(res.status).toBe(202);
  const job = await waitForJob(t.key, res.body.job_id);
  expect(job.status).toBe('completed');
  return { pageId, jobId: res.body.job_id, brandId: job.brand_id };
}

afterEach(async () => {
  fake.control.throttle = { times: 0 };
  fake.control.fail = { times: 0 };
  fake.control.delayMs = 0;
  fake.control.token = TOKEN;
  await settle();
});

const BRAND_KEYS = ['id', 'name', 'meta_page_id', 'page_url', 'about', 'profile_picture_url', 'page_categories', 'page_like_count', 'created_at'];
const AD_KEYS = [
  'id',
  'brand_id',
  'ad_archive_id',
  'is_active',
  'start_date',
  'end_date',
  'body_text',
  'title',
  'cta_text',
  'cta_type',
  'link_url',
  'display_format',
  'publisher_platforms',
  'media',
  'thumbnail_url',
  'eu_total_reach',
  'created_at',
];
const keysOf = (o: object) => Object.keys(o).sort();

describe('the scrape rate limit (3 per minute per team)', () => {
  it('answers the 4th scrape in a minute 429 with Retry-After and RateLimit-* headers; the 5th after the wait succeeds', async () => {
    const t = await svc.team({ credits: 100 });
    const first = await scrape(t.key, pageUrl(newPage()));
    expect(first.status).toBe(202);
    expect(first.headers['ratelimit-remaining']).toBe('2');
    expect(first.headers['ratelimit-policy']).toBe('3;w=60');
    // As if the first request had come 57 s ago: its slot frees in about 3 s.
    await sql`update rate_limit_hits set at = at - interval '57 seconds' where team_id = ${t.teamId}`.execute(svc.app.db);
    const second = await scrape(t.key, pageUrl(newPage()));
    expect(second.status).toBe(202);
    expect(second.headers['ratelimit-remaining']).toBe('1');
    const third = await scrape(t.key, pageUrl(newPage()));
    expect(third.status).toBe(202);
    expect(third.headers['ratelimit-remaining']).toBe('0');
    expect(Number(third.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    expect(Number(third.headers['ratelimit-reset'])).toBeLessThanOrEqual(4);

    const fourthPage = newPage();
    const fourth = await scrape(t.key, pageUrl(fourthPage));
    expect(fourth.status).toBe(429);
    expect(fourth.body.error.code).toBe('rate_limited');
    expect(fourth.body.error.message).toMatch(/3 per minute/);
    const retryAfter = Number(fourth.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(4);
    expect(fourth.headers['ratelimit-limit']).toBe('3');
    expect(fourth.headers['ratelimit-remaining']).toBe('0');
    expect(fourth.headers['ratelimit-reset']).toBe(String(retryAfter));
    expect(fourth.headers['ratelimit-policy']).toBe('3;w=60');

    await sleep(retryAfter * 1000);
    const fifth = await scrape(t.key, pageUrl(fourthPage));
    expect(fifth.status).toBe(202);
    expect(fifth.body.status).toBe('processing');
    expect(fifth.headers['ratelimit-remaining']).toBe('0');
    expect(await hitsOf(t.teamId)).toBe(4);
    expect(await creditsUsed(t.teamId)).toBe(40);
  }, 20_000);

  it('lets exactly 3 of 6 concurrent scrapes of one team through, without touching other teams', async () => {
    const t = await svc.team({ credits: 100 });
    const other = await svc.team({ credits: 100 });
    const pages = Array.from({ length: 6 }, () => newPage());
    const otherPages = Array.from({ length: 3 }, () => newPage());
    const [mine, theirs] = await Promise.all([
      Promise.all(pages.map((p) => scrape(t.key, pageUrl(p)))),
      Promise.all(otherPages.map((p) => scrape(other.key, pageUrl(p)))),
    ]);
    expect(mine.map((r) => r.status).sort()).toEqual([202, 202, 202, 429, 429, 429]);
    for (const r of mine.filter((x) => x.status === 429)) {
      expect(r.body.error.code).toBe('rate_limited');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(59);
      expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    expect(mine.filter((r) => r.status === 202).map((r) => r.headers['ratelimit-remaining']).sort()).toEqual(['0', '1', '2']);
    expect(theirs.map((r) => r.status)).toEqual([202, 202, 202]);
    expect(await hitsOf(t.teamId)).toBe(3);
    expect(await hitsOf(other.teamId)).toBe(3);
    const jobs = await jobsOfTeam(t.teamId);
    expect(jobs).toHaveLength(3);
    // The jobs are those of the answered requests, and only those.
    const accepted = mine.map((r, i) => (r.status === 202 ? pages[i] : null)).filter(Boolean).sort();
    expect(jobs.map((j) => j.meta_page_id).sort()).toEqual(accepted);
    expect(await creditsUsed(t.teamId)).toBe(30);
    expect(await creditsUsed(other.teamId)).toBe(30);
  });

  it('does not count 400s and 402s, and counts `existing` answers', async () => {
    const existing = await scrapedPage();
    const t = await svc.team({ credits: 5 });
    for (const url of ['https://example.com/ads/library/?view_all_page_id=1', 'https://www.facebook.com/ads/library/', 'https://www.facebook.com/ads/library/?view_all_page_id=abc']) {
      expect((await scrape(t.key, url)).status).toBe(400);
    }
    expect((await scrape(t.key, undefined)).status).toBe(400);
    expect((await scrape(t.key, pageUrl(newPage()))).status).toBe(402);
    expect((await scrape(t.key, pageUrl(newPage()))).status).toBe(402);
    expect(await hitsOf(t.teamId)).toBe(0);

    for (const remaining of ['2', '1', '0']) {
      const res = await scrape(t.key, pageUrl(existing.pageId));
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('existing');
      expect(res.headers['ratelimit-remaining']).toBe(remaining);
    }
    const refused = await scrape(t.key, pageUrl(existing.pageId));
    expect(refused.status).toBe(429);
    expect(await hitsOf(t.teamId)).toBe(3);
    expect(await creditsUsed(t.teamId)).toBe(0);
  });

  it('changes nothing when it refuses a request: no job, no charge, no hit, no call to the source', async () => {
    const existing = await scrapedPage();
    const t = await svc.team({ credits: 100 });
    for (let i = 0; i < 3; i++) expect((await scrape(t.key, pageUrl(existing.pageId))).status).toBe(200);
    const pageId = newPage();
    const refused = await scrape(t.key, pageUrl(pageId));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(await jobsOfPage(pageId)).toHaveLength(0);
    expect(await jobsOfTeam(t.teamId)).toHaveLength(0);
    expect(await creditsUsed(t.teamId)).toBe(0);
    expect(await ledgerOf(t.teamId)).toEqual([]);
    expect(await hitsOf(t.teamId)).toBe(3);
    expect(fake.requests.filter((r) => r.query.pageId === pageId)).toEqual([]);
    const brand = await svc.app.db.selectFrom('ad_library_brands').select('id').where('meta_page_id', '=', pageId).executeTakeFirst();
    expect(brand).toBeUndefined();
  });
});

describe('pages already scraped or being scraped', () => {
  it('answers a freshly scraped page `existing` at once: no job, no charge', async () => {
    const page = await scrapedPage();
    const t = await svc.team({ credits: 100 });
    const requestsBefore = fake.requests.length;
    const res = await scrape(t.key, pageUrl(page.pageId));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ job_id: page.jobId, status: 'existing', brand_id: page.brandId });
    expect(res.headers['ratelimit-remaining']).toBe('2');
    expect(await jobsOfTeam(t.teamId)).toHaveLength(0);
    expect(await jobsOfPage(page.pageId)).toHaveLength(1);
    expect(await creditsUsed(t.teamId)).toBe(0);
    expect(await ledgerOf(t.teamId)).toEqual([]);
    expect(fake.requests.length).toBe(requestsBefore);
    // Any spelling of the same page's URL is the same page.
    const other = await scrape(t.key, `facebook.com/ads/library?view_all_page_id=${page.pageId}&country=US`);
    expect(other.status).toBe(200);
    expect(other.body.brand_id).toBe(page.brandId);
  });

  it('lets another team join a running scrape of the page: same job, no charge', async () => {
    const pageId = newPage();
    const a = await svc.team({ credits: 100 });
    const b = await svc.team({ credits: 100 });
    fake.control.delayMs = 1500; // the source is slow: the job stays running
    const started = await scrape(a.key, pageUrl(pageId));
    expect(started.status).toBe(202);
    const joined = await scrape(b.key, pageUrl(pageId));
    fake.control.delayMs = 0;
    expect(joined.status).toBe(202);
    expect(joined.body).toEqual({ job_id: started.body.job_id, status: 'processing' });
    expect(joined.headers['ratelimit-remaining']).toBe('2');
    expect(await creditsUsed(a.teamId)).toBe(10);
    expect(await creditsUsed(b.teamId)).toBe(0);
    expect(await ledgerOf(b.teamId)).toEqual([]);
    expect(await jobsOfTeam(b.teamId)).toHaveLength(0);
    expect(await hitsOf(b.teamId)).toBe(1);
    // Team B can follow the job it joined.
    const job = await waitForJob(b.key, started.body.job_id);
    expect(job).toMatchObject({ status: 'completed', ads_count: 5 });
    expect(await jobsOfPage(pageId)).toHaveLength(1);
  });

  it('starts one job and charges once when two teams post the same new page at once', async () => {
    const pageId = newPage();
    const teams = await Promise.all([svc.team({ credits: 100 }), svc.team({ credits: 100 }), svc.team({ credits: 100 })]);
    fake.control.delayMs = 500;
    const answers = await Promise.all(teams.map((t) => scrape(t.key, pageUrl(pageId))));
    fake.control.delayMs = 0;
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202]);
    const ids = new Set(answers.map((r) => r.body.job_id));
    expect(ids.size).toBe(1);
    const jobs = await jobsOfPage(pageId);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.id).toBe([...ids][0]);
    const used = await Promise.all(teams.map((t) => creditsUsed(t.teamId)));
    expect(used.sort((x, y) => x - y)).toEqual([0, 0, 10]);
    const payer = teams.find((t) => t.teamId === jobs[0]!.team_id)!;
    expect(await ledgerOf(payer.teamId)).toEqual([{ kind: 'debit', amount: 10, subject_type: 'ad_library_scrape', subject_id: jobs[0]!.id }]);
    expect((await waitForJob(teams[0]!.key, jobs[0]!.id)).status).toBe('completed');
  });
});

describe('scraping a page again', () => {
  it('updates the brand and its ads in place once the page is stale, and charges the new job', async () => {
    const page = await scrapedPage();
    const t = await svc.team({ credits: 100 });
    const before = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}/ads?limit=100`, { key: t.key });
    expect(before.body.pagination.total).toBe(5);
    const changedId = archiveId(page.pageId, 0);
    const changedBefore = before.body.data.find((a: any) => a.ad_archive_id === changedId);
    expect(changedBefore.body_text).toBe('Summer linen, now in sand and sage.');

    const record = fake.control.pages.get(page.pageId)![0]![0] as any;
    record.snapshot.body.text = 'Summer linen, now also in navy.';
    record.is_active = false;
    record.end_date = 1767225600;
    await sql`update ad_library_brands set scraped_at = now() - interval '2 days' where id = ${page.brandId}`.execute(svc.app.db);

    const res = await scrape(t.key, pageUrl(page.pageId));
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('processing');
    expect(res.body.job_id).not.toBe(page.jobId);
    expect(await creditsUsed(t.teamId)).toBe(10);
    expect(await ledgerOf(t.teamId)).toEqual([{ kind: 'debit', amount: 10, subject_type: 'ad_library_scrape', subject_id: res.body.job_id }]);
    const job = await waitForJob(t.key, res.body.job_id);
    expect(job).toMatchObject({ status: 'completed', brand_id: page.brandId, ads_count: 5 });

    const brands = await sql<{ n: number }>`select count(*)::int as n from ad_library_brands where meta_page_id = ${page.pageId}`.execute(svc.app.db);
    expect(brands.rows[0]!.n).toBe(1);
    const after = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}/ads?limit=100`, { key: t.key });
    expect(after.body.pagination.total).toBe(5);
    expect(after.body.data.map((a: any) => a.id).sort()).toEqual(before.body.data.map((a: any) => a.id).sort());
    const changedAfter = after.body.data.find((a: any) => a.ad_archive_id === changedId);
    expect(changedAfter.id).toBe(changedBefore.id);
    expect(changedAfter.body_text).toBe('Summer linen, now also in navy.');
    expect(changedAfter.is_active).toBe(false);
    expect(changedAfter.end_date).toBe(new Date(1767225600 * 1000).toISOString());
    expect(changedAfter.created_at).toBe(changedBefore.created_at);

    // Fresh again: the newest completed job is the one `existing` names.
    const again = await scrape(t.key, pageUrl(page.pageId));
    expect(again.body).toEqual({ job_id: res.body.job_id, status: 'existing', brand_id: page.brandId });
    expect(await creditsUsed(t.teamId)).toBe(10);
  });
});

describe('reading the library', () => {
  it('lists a brand’s ads newest start date first, with limit/offset and totals', async () => {
    const page = await scrapedPage();
    const t = await svc.team();
    const all = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}/ads?limit=100`, { key: t.key });
    expect(all.status).toBe(200);
    expect(all.body.pagination).toEqual({ total: 5, limit: 100, offset: 0 });
    expect(all.body.data.map((a: any) => a.ad_archive_id)).toEqual([4, 2, 0, 1, 3].map((n) => archiveId(page.pageId, n)));
    const starts = all.body.data.map((a: any) => Date.parse(a.start_date));
    expect(starts).toEqual([...starts].sort((x, y) => y - x));

    const seen: string[] = [];
    for (const offset of [0, 2, 4]) {
      const res = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}/ads?limit=2&offset=${offset}`, { key: t.key });
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ total: 5, limit: 2, offset });
      expect(res.body.data).toHaveLength(offset === 4 ? 1 : 2);
      seen.push(...res.body.data.map((a: any) => a.id));
    }
    expect(seen).toEqual(all.body.data.map((a: any) => a.id));
    const past = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}/ads?offset=10`, { key: t.key });
    expect(past.body).toEqual({ data: [], pagination: { total: 5, limit: 20, offset: 10 } });
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'limit=abc']) {
      const bad = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}/ads?${q}`, { key: t.key });
      expect(bad.status, q).toBe(400);
      expect(bad.body.error.code).toBe('validation_error');
    }

    const brands = await svc.api('GET', '/api/v1/ad-library/brands?limit=1', { key: t.key });
    expect(brands.status).toBe(200);
    expect(brands.body.data).toHaveLength(1);
    expect(brands.body.pagination.limit).toBe(1);
    expect(brands.body.pagination.total).toBeGreaterThanOrEqual(2);
  });

  it('gives brand, list-ad and single-ad objects exactly the spec’s fields', async () => {
    const page = await scrapedPage();
    const t = await svc.team();
    const brands = await svc.api('GET', '/api/v1/ad-library/brands?limit=100', { key: t.key });
    const listed = brands.body.data.find((b: any) => b.id === page.brandId);
    expect(keysOf(listed)).toEqual([...BRAND_KEYS].sort());
    const one = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}`, { key: t.key });
    expect(one.status).toBe(200);
    expect(keysOf(one.body)).toEqual([...BRAND_KEYS].sort());
    expect(one.body).toMatchObject({
      id: page.brandId,
      name: 'Acme Outfitters',
      meta_page_id: page.pageId,
      page_url: 'https://www.facebook.com/acmeoutfitters/',
      about: '',
      page_categories: ['Clothing (Brand)', 'Shopping & retail'],
      page_like_count: 48213,
    });
    expect(new Date(one.body.created_at).toISOString()).toBe(one.body.created_at);

    const ads = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}/ads?limit=100`, { key: t.key });
    for (const ad of ads.body.data) {
      expect(keysOf(ad)).toEqual([...AD_KEYS].sort());
      for (const m of ad.media) expect(keysOf(m)).toEqual(['type', 'url']);
      const single = await svc.api('GET', `/api/v1/ad-library/ads/${ad.id}`, { key: t.key });
      expect(single.status).toBe(200);
      expect(keysOf(single.body)).toEqual([...AD_KEYS].sort());
      for (const m of single.body.media) expect(keysOf(m)).toEqual(['r2_url', 'type']);
      const { media: _a, ...restList } = ad;
      const { media: _b, ...restSingle } = single.body;
      expect(restSingle).toEqual(restList);
      expect(single.body.media.map((m: any) => m.type)).toEqual(ad.media.map((m: any) => m.type));
    }
    const linen = ads.body.data.find((a: any) => a.ad_archive_id === archiveId(page.pageId, 0));
    expect(linen).toMatchObject({
      brand_id: page.brandId,
      is_active: true,
      start_date: '2025-01-01T00:00:00.000Z',
      end_date: null,
      body_text: 'Summer linen, now in sand and sage.',
      title: 'Linen Shirt',
      cta_text: 'Shop now',
      cta_type: 'SHOP_NOW',
      link_url: 'https://acme.example/linen',
      display_format: 'IMAGE',
      publisher_platforms: ['FACEBOOK', 'INSTAGRAM'],
      media: [{ type: 'image', url: `${fake.baseUrl}/media/linen.png` }],
      thumbnail_url: `${fake.baseUrl}/media/linen-small.png`,
      eu_total_reach: 0,
    });
  });

  it('stores image and video media: list items link the source, single ads link our signed copies', async () => {
    // One more image the source cannot serve: its copy is missing (r2_url null), the scrape still completes.
    const page = await scrapedPage((pages) => {
      pages[0]![0].snapshot.images.push({ original_image_url: '{{BASE}}/gone/missing.png' });
    });
    const t = await svc.team();
    const ads = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}/ads?limit=100`, { key: t.key });
    const types = new Set<string>();
    let nullCopies = 0;
    for (const ad of ads.body.data) {
      for (const m of ad.media) expect(m.url.startsWith(`${fake.baseUrl}/`)).toBe(true);
      const single = await svc.api('GET', `/api/v1/ad-library/ads/${ad.id}`, { key: t.key });
      for (const [i, m] of (single.body.media as any[]).entries()) {
        types.add(m.type);
        if (ad.media[i].url.endsWith('/gone/missing.png')) {
          expect(m.r2_url).toBeNull();
          nullCopies += 1;
          continue;
        }
        expect(m.r2_url).toMatch(new RegExp(`^${svc.baseUrl}/files/`));
        const expires = Number(new URL(m.r2_url).searchParams.get('expires'));
        expect(Math.abs(expires - (Date.now() / 1000 + 3600))).toBeLessThan(120);
        const file = await svc.fetchUrl(m.r2_url);
        expect(file.status).toBe(200);
        expect(file.headers['content-type']).toBe(m.type === 'image' ? 'image/png' : 'video/mp4');
        expect(file.bytes.length).toBeGreaterThan(0);
      }
    }
    expect([...types].sort()).toEqual(['image', 'video']);
    expect(nullCopies).toBe(1);
    const autumn = ads.body.data.find((a: any) => a.ad_archive_id === archiveId(page.pageId, 1));
    expect(autumn.media).toEqual([{ type: 'video', url: `${fake.baseUrl}/media/autumn.mp4` }]);
    const carousel = ads.body.data.find((a: any) => a.ad_archive_id === archiveId(page.pageId, 2));
    expect(carousel.media).toEqual([
      { type: 'image', url: `${fake.baseUrl}/media/coat.png` },
      { type: 'video', url: `${fake.baseUrl}/media/scarf.mp4` },
    ]);

    const brand = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}`, { key: t.key });
    expect(brand.body.profile_picture_url).toMatch(new RegExp(`^${svc.baseUrl}/files/`));
    const picture = await svc.fetchUrl(brand.body.profile_picture_url);
    expect(picture.status).toBe(200);
    expect(picture.headers['content-type']).toBe('image/png');
  });

  it('keeps active and inactive ads; active ads have no end date', async () => {
    const page = await scrapedPage();
    const t = await svc.team();
    const ads = (await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}/ads?limit=100`, { key: t.key })).body.data as any[];
    const active = ads.filter((a) => a.is_active);
    const inactive = ads.filter((a) => !a.is_active);
    expect(active.map((a) => a.ad_archive_id).sort()).toEqual([0, 2, 4].map((n) => archiveId(page.pageId, n)));
    expect(inactive.map((a) => a.ad_archive_id).sort()).toEqual([1, 3].map((n) => archiveId(page.pageId, n)));
    for (const a of active) expect(a.end_date).toBeNull();
    const autumn = inactive.find((a) => a.ad_archive_id === archiveId(page.pageId, 1));
    expect(autumn.end_date).toBe('2024-11-01T00:00:00.000Z');
    const undated = inactive.find((a) => a.ad_archive_id === archiveId(page.pageId, 3));
    expect(undated.end_date).toBeNull();
  });
});

describe('what the source is paid', () => {
  it('a scrape pays the source once per result page: the brand is read from the first page the ads start with', async () => {
    const pageId = newPage();
    const t = await svc.team({ credits: 100 });
    const res = await scrape(t.key, pageUrl(pageId));
    expect((await waitForJob(t.key, res.body.job_id)).status).toBe('completed');
    expect(fake.billed.filter((b) => b.pageId === pageId).map((b) => b.page)).toEqual([0, 1, 2]);
  });

  it('a page whose answer is lost after the source made it is not asked again: the scrape fails and is refunded', async () => {
    const pageId = newPage();
    const t = await svc.team({ credits: 100 });
    fake.control.cutAnswers = 1;
    const res = await scrape(t.key, pageUrl(pageId));
    const job = await waitForJob(t.key, res.body.job_id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/was cut off; the page was not asked again, since the source bills every call$/);
    expect(fake.billed.filter((b) => b.pageId === pageId)).toHaveLength(1);
    expect(await creditsUsed(t.teamId)).toBe(0);
    expect((await ledgerOf(t.teamId)).map((l) => l.kind)).toEqual(['debit', 'refund']);
  });
});

describe('when the source misbehaves', () => {
  it('waits out the source’s throttling and completes', async () => {
    const pageId = newPage();
    const t = await svc.team({ credits: 100 });
    fake.control.throttle = { times: 2 };
    const res = await scrape(t.key, pageUrl(pageId));
    const job = await waitForJob(t.key, res.body.job_id);
    expect(job).toMatchObject({ status: 'completed', ads_count: 5, error: null });
    const calls = fake.adsRequests().filter((r) => r.query.pageId === pageId);
    expect(calls.filter((r) => r.status === 429)).toHaveLength(2);
    expect(await creditsUsed(t.teamId)).toBe(10);
    expect(await ledgerOf(t.teamId)).toHaveLength(1);
  });

  it('fails the job with a clear error and refunds the credits when the source keeps failing', async () => {
    const pageId = newPage();
    const t = await svc.team({ credits: 100 });
    fake.control.fail = { times: 'always' };
    const res = await scrape(t.key, pageUrl(pageId));
    expect(res.status).toBe(202);
    expect(await creditsUsed(t.teamId)).toBe(10);
    const job = await waitForJob(t.key, res.body.job_id);
    expect(job).toMatchObject({ status: 'failed', brand_id: null, ads_count: 0 });
    expect(job.error).toMatch(/Ad Library source answered HTTP 500 \(\d+ attempts\)/);
    expect(job.error).not.toContain(TOKEN);
    expect(job.completed_at).toEqual(expect.any(String));
    expect(await creditsUsed(t.teamId)).toBe(0);
    expect(await ledgerOf(t.teamId)).toEqual([
      { kind: 'debit', amount: 10, subject_type: 'ad_library_scrape', subject_id: res.body.job_id },
      { kind: 'refund', amount: -10, subject_type: 'ad_library_scrape', subject_id: res.body.job_id },
    ]);
    const brands = await svc.api('GET', '/api/v1/ad-library/brands?limit=100', { key: t.key });
    expect(brands.body.data.map((b: any) => b.meta_page_id)).not.toContain(pageId);
    // A failed scrape is no `existing` page: asking again starts (and charges) a new job.
    fake.control.fail = { times: 0 };
    const again = await scrape(t.key, pageUrl(pageId));
    expect(again.status).toBe(202);
    expect(again.body.job_id).not.toBe(res.body.job_id);
    expect((await waitForJob(t.key, again.body.job_id)).status).toBe('completed');
    expect(await creditsUsed(t.teamId)).toBe(10);
  });

  it('lists nothing of a scrape that failed part-way', async () => {
    const pageId = newPage();
    const t = await svc.team({ credits: 100 });
    fake.control.fail = { times: 'always', onPage: 1 };
    const res = await scrape(t.key, pageUrl(pageId));
    const job = await waitForJob(t.key, res.body.job_id);
    expect(job.status).toBe('failed');
    expect(await creditsUsed(t.teamId)).toBe(0);
    // The brand and the first page's ads were stored, but none of it is readable.
    const brand = await svc.app.db.selectFrom('ad_library_brands').selectAll().where('meta_page_id', '=', pageId).executeTakeFirstOrThrow();
    expect(brand.scraped_at).toBeNull();
    const brands = await svc.api('GET', '/api/v1/ad-library/brands?limit=100', { key: t.key });
    expect(brands.body.data.map((b: any) => b.id)).not.toContain(brand.id);
    expect((await svc.api('GET', `/api/v1/ad-library/brands/${brand.id}`, { key: t.key })).status).toBe(404);
    expect((await svc.api('GET', `/api/v1/ad-library/brands/${brand.id}/ads`, { key: t.key })).status).toBe(404);
    const stored = await svc.app.db.selectFrom('ad_library_ads').select('id').where('brand_id', '=', brand.id).execute();
    expect(stored.length).toBeGreaterThan(0);
    expect((await svc.api('GET', `/api/v1/ad-library/ads/${stored[0]!.id}`, { key: t.key })).status).toBe(404);
  });

  it('fails and refunds at once when the source asks for a wait longer than a scrape may take', async () => {
    const pageId = newPage();
    const t = await svc.team({ credits: 100 });
    fake.control.throttle = { times: 1, retryAfter: '3600' };
    const res = await scrape(t.key, pageUrl(pageId));
    const job = await waitForJob(t.key, res.body.job_id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/asks to wait 3600 s/);
    expect(await creditsUsed(t.teamId)).toBe(0);
    expect((await ledgerOf(t.teamId)).map((l) => l.kind)).toEqual(['debit', 'refund']);
  });

  it('fails and refunds when the source refuses our token, without showing the token', async () => {
    const pageId = newPage();
    const t = await svc.team({ credits: 100 });
    fake.control.token = 'another-token'; // the fake echoes the key it got in its refusal
    const res = await scrape(t.key, pageUrl(pageId));
    const job = await waitForJob(t.key, res.body.job_id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/refused the access token \(HTTP 401/);
    expect(job.error).not.toContain(TOKEN);
    const row = await svc.app.db.selectFrom('ad_library_scrape_jobs').select('error').where('id', '=', res.body.job_id).executeTakeFirstOrThrow();
    expect(row.error).not.toContain(TOKEN);
    expect(await creditsUsed(t.teamId)).toBe(0);
  });

  it('fails and refunds a scrape of a page the source does not know (404)', async () => {
    const pageId = newPage({ register: false });
    const t = await svc.team({ credits: 100 });
    const res = await scrape(t.key, pageUrl(pageId));
    expect(res.status).toBe(202);
    const job = await waitForJob(t.key, res.body.job_id);
    expect(job.status).toBe('failed');
    expect(job.error).toContain(`no page ${pageId}`);
    expect(await creditsUsed(t.teamId)).toBe(0);
    expect((await ledgerOf(t.teamId)).map((l) => [l.kind, l.amount])).toEqual([
      ['debit', 10],
      ['refund', -10],
    ]);
    // Not found is not worth retrying: one request to the source.
    expect(fake.adsRequests().filter((r) => r.query.pageId === pageId)).toHaveLength(1);
  });
});

describe('refused requests', () => {
  it.each([
    ['missing url', undefined, /^url: is required$/],
    ['empty url', '   ', /^url: /],
    ['a non-Facebook URL', 'https://example.com/ads/library/?view_all_page_id=123', /^url: must be a Meta Ad Library URL/],
    ['an Ad Library URL without view_all_page_id', 'https://www.facebook.com/ads/library/?q=shoes&search_type=keyword_unordered', /^url: names no brand page/],
    ['a non-numeric page id', 'https://www.facebook.com/ads/library/?view_all_page_id=acme', /^url: view_all_page_id must be numeric/],
    ['a number as url', 12345, /^url: /],
  ])('answers %s with 400 validation_error naming url, charging nothing', async (_what, url, message) => {
    const t = await svc.team({ credits: 100 });
    const res = await scrape(t.key, url);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.message).toMatch(message);
    expect(await creditsUsed(t.teamId)).toBe(0);
    expect(await jobsOfTeam(t.teamId)).toHaveLength(0);
    expect(await hitsOf(t.teamId)).toBe(0);
  });

  it('answers 402 with the needed and available credits when the team has too few', async () => {
    const t = await svc.team({ credits: 7 });
    const pageId = newPage();
    const res = await scrape(t.key, pageUrl(pageId));
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('insufficient_credits');
    expect(res.body.error.message).toMatch(/\b10\b/);
    expect(res.body.error.message).toMatch(/\b7\b/);
    expect(await jobsOfPage(pageId)).toHaveLength(0);
    expect(await creditsUsed(t.teamId)).toBe(0);
    expect(await ledgerOf(t.teamId)).toEqual([]);
    expect(await hitsOf(t.teamId)).toBe(0);
  });

  it('answers 404 for unknown ids and 400 for malformed ones', async () => {
    const t = await svc.team();
    const unknown = '7d3c1f4e-2a9b-4c8d-9e0f-1a2b3c4d5e6f';
    for (const p of ['brands/%s', 'brands/%s/ads', 'ads/%s', 'scrape/%s']) {
      const missing = await svc.api('GET', `/api/v1/ad-library/${p.replace('%s', unknown)}`, { key: t.key });
      expect(missing.status, p).toBe(404);
      expect(missing.body.error.code).toBe('not_found');
      const malformed = await svc.api('GET', `/api/v1/ad-library/${p.replace('%s', 'not-a-uuid')}`, { key: t.key });
      expect(malformed.status, p).toBe(400);
      expect(malformed.body.error.code).toBe('validation_error');
      expect(malformed.body.error.message).toMatch(/^id: /);
    }
  });

  it('answers 401 without a valid key', async () => {
    const t = await svc.team();
    for (const [method, p] of [
      ['POST', '/api/v1/ad-library/scrape'],
      ['GET', '/api/v1/ad-library/brands'],
      ['GET', '/api/v1/ad-library/ads/7d3c1f4e-2a9b-4c8d-9e0f-1a2b3c4d5e6f'],
      ['GET', '/api/v1/ad-library/scrape/7d3c1f4e-2a9b-4c8d-9e0f-1a2b3c4d5e6f'],
    ] as const) {
      for (const key of [undefined, 'service_sk_not-a-real-key']) {
        const res = await svc.api(method, p, { key, body: method === 'POST' ? { url: pageUrl(newPage()) } : undefined });
        expect(res.status, `${method} ${p}`).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
      }
    }
    expect(await hitsOf(t.teamId)).toBe(0);
  });
});

describe('Idempotency-Key on POST /ad-library/scrape', () => {
  it('replays the first answer: no second job, no second charge, no rate-limit slot', async () => {
    const t = await svc.team({ credits: 100 });
    const pageId = newPage();
    const headers = { 'idempotency-key': `scrape-${pageId}` };
    const first = await scrape(t.key, pageUrl(pageId), headers);
    expect(first.status).toBe(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // Use up the team's other two slots: a replay is still answered.
    expect((await scrape(t.key, pageUrl(newPage()))).status).toBe(202);
    expect((await scrape(t.key, pageUrl(newPage()))).status).toBe(202);
    const replay = await scrape(t.key, pageUrl(pageId), headers);
    expect(replay.status).toBe(202);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await jobsOfPage(pageId)).toHaveLength(1);
    expect(await jobsOfTeam(t.teamId)).toHaveLength(3);
    expect(await creditsUsed(t.teamId)).toBe(30);
    expect(await hitsOf(t.teamId)).toBe(3);
    // The same key with another body is refused.
    const other = await scrape(t.key, pageUrl(newPage()), headers);
    expect(other.status).toBe(400);
    expect(other.body.error.message).toMatch(/Idempotency-Key/);
  });

  it('replays a completed scrape’s answer after the page became `existing`', async () => {
    const t = await svc.team({ credits: 100 });
    const pageId = newPage();
    const headers = { 'idempotency-key': 'one-scrape' };
    const first = await scrape(t.key, pageUrl(pageId), headers);
    await waitForJob(t.key, first.body.job_id);
    const replay = await scrape(t.key, pageUrl(pageId), headers);
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ job_id: first.body.job_id, status: 'processing' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await creditsUsed(t.teamId)).toBe(10);
  });
});

describe('the page the records name', () => {
  it('files the brand under the page asked for, even when the source’s records name another page id', async () => {
    // e.g. a page that moved to a new id: the Ad Library still answers the old id with the new one's records.
    const movedTo = '4999999999';
    const page = await scrapedPage((pages) => {
      for (const r of pages.flat()) {
        if (r.page_id !== undefined) r.page_id = movedTo;
        if (r.snapshot?.page_id !== undefined) r.snapshot.page_id = movedTo;
      }
    });
    const t = await svc.team({ credits: 100 });
    const again = await scrape(t.key, pageUrl(page.pageId));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ job_id: page.jobId, status: 'existing', brand_id: page.brandId });
    expect(await creditsUsed(t.teamId)).toBe(0);
    const brand = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}`, { key: t.key });
    expect(brand.body.meta_page_id).toBe(page.pageId);
  });
});

describe('an ad the source gives twice', () => {
  it('is stored and counted once', async () => {
    const page = await scrapedPage((pages) => {
      const linen = JSON.parse(JSON.stringify(pages[0]![0]));
      pages[2]!.push(linen); // again on the last result page
      pages[1]!.push(JSON.parse(JSON.stringify(pages[1]![0]))); // twice on one result page
    });
    const t = await svc.team();
    const job = await svc.api('GET', `/api/v1/ad-library/scrape/${page.jobId}`, { key: t.key });
    expect(job.body).toMatchObject({ status: 'completed', ads_count: 5 });
    const ads = await svc.api('GET', `/api/v1/ad-library/brands/${page.brandId}/ads?limit=100`, { key: t.key });
    expect(ads.body.pagination.total).toBe(5);
    expect(new Set(ads.body.data.map((a: any) => a.ad_archive_id)).size).toBe(5);
  });
});
