import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { FIXTURE_PAGE_ID, startMetaAdLibraryFake, type MetaAdLibraryFake } from '../support/meta-ad-library-fake.ts';

const TOKEN = 'source-token';
const MISSING = '00000000-0000-4000-8000-000000000000';
let svc: TestService;
let fake: MetaAdLibraryFake;
let client: Awaited<ReturnType<typeof graphqlClient>>;
const pageUrl = (id = FIXTURE_PAGE_ID) => `https://www.facebook.com/ads/library/?active_status=all&ad_type=all&country=ALL&view_all_page_id=${id}`;
/** Signed links differ per read only by their expiry and signature. */
const strip = (u: string | null) => (u === null ? null : u.replace(/[?&](expires|signature)=[^&]*/g, ''));

const BRAND_FIELDS = 'id name meta_page_id page_url about profile_picture_url page_categories page_like_count created_at';
const AD_FIELDS =
  'id brand_id ad_archive_id is_active start_date end_date body_text title cta_text cta_type link_url display_format publisher_platforms thumbnail_url eu_total_reach created_at';
const JOB_FIELDS = 'job_id status meta_page_id brand_id ads_count error created_at completed_at';
const SCRAPE = `mutation ($url: String!, $key: String) {
  scrapeAdLibrary(url: $url, idempotencyKey: $key) {
    __typename
    ... on MutationScrapeAdLibrarySuccess { data { job_id status brand_id job { job_id status } brand { id } } }
    ... on AppError { code message }
  }
}`;

async function scrape(key: string, url = pageUrl(), idempotencyKey?: string): Promise<any> {
  const res = await client.gql(SCRAPE, { url, key: idempotencyKey ?? null }, key);
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data.scrapeAdLibrary;
}

async function creditsUsed(teamId: string): Promise<number> {
  const row = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow();
  return row.credits_used;
}

/** Every scrapeJobUpdated event until the server completes the subscription. */
async function watchJob(key: string, jobId: string): Promise<any[]> {
  const ws = client.ws(key);
  const seen: any[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no end: ${JSON.stringify(seen)}`)), 40_000);
      ws.subscribe(
        { query: `subscription ($id: ID!) { scrapeJobUpdated(job_id: $id) { ${JOB_FIELDS} brand { id name } } }`, variables: { id: jobId } },
        {
          next: (m: any) => (m.errors ? reject(new Error(JSON.stringify(m.errors))) : seen.push(m.data.scrapeJobUpdated)),
          error: (e) => {
            clearTimeout(timer);
            reject(e instanceof Error ? e : new Error(JSON.stringify(e)));
          },
          complete: () => {
            clearTimeout(timer);
            resolve();
          },
        },
      );
    });
  } finally {
    await ws.dispose();
  }
  return seen;
}

let a: Awaited<ReturnType<TestService['team']>>;
let jobId: string;
let brandId: string;

beforeAll(async () => {
  fake = await startMetaAdLibraryFake({ token: TOKEN });
  svc = await startTestService(
    { AD_LIBRARY_SOURCE_URL: fake.baseUrl, AD_LIBRARY_SOURCE_TOKEN: TOKEN, AD_LIBRARY_SOURCE_BACKOFF_MS: '10' },
    { worker: true },
  );
  client = await graphqlClient(svc);
  a = await svc.team({ credits: 100 });
});
afterAll(async () => {
  await client?.close();
  await svc?.close();
  await fake?.close();
});

describe('the ad library over GraphQL', () => {
  it('scrapeAdLibrary starts a job and scrapeJobUpdated streams it from processing to completed', async () => {
    // Each answer of the source is held, so the job is still running when the subscription starts.
    fake.control.delayMs = 1000;
    try {
      const started = await scrape(a.key, pageUrl(), 'first-scrape');
      expect(started.__typename).toBe('MutationScrapeAdLibrarySuccess');
      expect(started.data).toMatchObject({ job_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'processing', brand_id: null, brand: null });
      expect(started.data.job).toEqual({ job_id: started.data.job_id, status: 'processing' });
      jobId = started.data.job_id;
      expect(await creditsUsed(a.teamId)).toBe(10);

      const seen = await watchJob(a.key, jobId);
      expect(seen[0]).toMatchObject({ job_id: jobId, status: 'processing', meta_page_id: FIXTURE_PAGE_ID, completed_at: null, brand: null });
      const last = seen.at(-1);
      expect(last).toMatchObject({ job_id: jobId, status: 'completed', ads_count: 5, error: null, completed_at: expect.any(String) });
      expect(last.brand).toEqual({ id: last.brand_id, name: 'Acme Outfitters' });
      expect(seen.filter((j) => j.status !== 'processing')).toHaveLength(1);
      brandId = last.brand_id;
    } finally {
      fake.control.delayMs = 0;
    }
    // A subscription to a job that has already ended yields it once and completes.
    const again = await watchJob(a.key, jobId);
    expect(again).toHaveLength(1);
    expect(again[0].status).toBe('completed');
    const rest = await svc.api('GET', `/api/v1/ad-library/scrape/${jobId}`, { key: a.key });
    const { brand: _brand, ...job } = again[0];
    expect(job).toEqual(rest.body);
    const polled = await client.gql(`query ($id: ID!) { scrapeJob(id: $id) { ${JOB_FIELDS} } }`, { id: jobId }, a.key);
    expect(polled.body.data.scrapeJob).toEqual(rest.body);
  }, 60_000);

  it('brands and ads read field for field as REST does', async () => {
    const b = await svc.team({ credits: 0 });
    // Shared library: another team reads what team A scraped.
    const restBrands = await svc.api('GET', '/api/v1/ad-library/brands', { key: b.key });
    const brands = await client.gql(`{ adLibraryBrands { totalCount limit offset items { ${BRAND_FIELDS} } } }`, {}, b.key);
    expect(brands.body.errors).toBeUndefined();
    const page = brands.body.data.adLibraryBrands;
    expect({ total: page.totalCount, limit: page.limit, offset: page.offset }).toEqual(restBrands.body.pagination);
    const noLinks = (x: any) => ({ ...x, profile_picture_url: strip(x.profile_picture_url) });
    expect(page.items.map(noLinks)).toEqual(restBrands.body.data.map(noLinks));
    expect(page.items.map((x: any) => x.id)).toEqual([brandId]);
    expect(page.items[0].profile_picture_url).toMatch(/^https:/);

    const one = await client.gql(`query ($id: ID!) { adLibraryBrand(id: $id) { ${BRAND_FIELDS} } }`, { id: brandId }, b.key);
    const restOne = await svc.api('GET', `/api/v1/ad-library/brands/${brandId}`, { key: b.key });
    expect(noLinks(one.body.data.adLibraryBrand)).toEqual(noLinks(restOne.body));

    const restAds = await svc.api('GET', `/api/v1/ad-library/brands/${brandId}/ads?limit=100`, { key: b.key });
    expect(restAds.body.pagination.total).toBe(5);
    const ads = await client.gql(
      `query ($id: ID!) {
        adLibraryAds(brand_id: $id, limit: 100) { totalCount limit offset items { ${AD_FIELDS} media { type url } } }
        adLibraryBrand(id: $id) { ads(limit: 100) { totalCount limit offset items { ${AD_FIELDS} media { type url } } } }
      }`,
      { id: brandId },
      b.key,
    );
    expect(ads.body.errors).toBeUndefined();
    for (const p of [ads.body.data.adLibraryAds, ads.body.data.adLibraryBrand.ads]) {
      expect({ total: p.totalCount, limit: p.limit, offset: p.offset }).toEqual(restAds.body.pagination);
      expect(p.items).toEqual(restAds.body.data);
    }

    // The same paging on both doors, through a brand page as through the ads query.
    const restSecond = await svc.api('GET', `/api/v1/ad-library/brands/${brandId}/ads?limit=2&offset=2`, { key: b.key });
    const second = await client.gql(
      `{ adLibraryBrands { items { ads(limit: 2, offset: 2) { totalCount limit offset items { id } } } } }`,
      {},
      b.key,
    );
    const p2 = second.body.data.adLibraryBrands.items[0].ads;
    expect({ total: p2.totalCount, limit: p2.limit, offset: p2.offset }).toEqual(restSecond.body.pagination);
    expect(p2.items.map((x: any) => x.id)).toEqual(restSecond.body.data.map((x: any) => x.id));
    const beyond = await client.gql(`{ adLibraryBrands { items { ads(offset: 50) { totalCount items { id } } } } }`, {}, b.key);
    expect(beyond.body.data.adLibraryBrands.items[0].ads).toEqual({ totalCount: 5, items: [] });
    const badPage = await client.gql(`{ adLibraryBrands { items { ads(limit: 0) { totalCount } } } }`, {}, b.key);
    expect(badPage.body.errors[0].extensions.code).toBe('validation_error');

    for (const listed of restAds.body.data) {
      const rest = await svc.api('GET', `/api/v1/ad-library/ads/${listed.id}`, { key: b.key });
      const res = await client.gql(`query ($id: ID!) { adLibraryAd(id: $id) { ${AD_FIELDS} media { type r2_url url } brand { id } } }`, { id: listed.id }, b.key);
      const { media, brand, ...fields } = res.body.data.adLibraryAd;
      const { media: restMedia, ...restFields } = rest.body;
      expect(fields).toEqual(restFields);
      expect(brand).toEqual({ id: brandId });
      expect(media.map((m: any) => ({ type: m.type, r2_url: strip(m.r2_url) }))).toEqual(restMedia.map((m: any) => ({ type: m.type, r2_url: strip(m.r2_url) })));
      // Each item carries the source's link too, the one the list shows.
      expect(media.map((m: any) => ({ type: m.type, url: m.url }))).toEqual(listed.media);
      for (const m of media) expect((await svc.fetchUrl(m.r2_url)).status).toBe(200);
    }
  }, 60_000);

  it('a second scrape of the page answers existing, with no new job and no charge', async () => {
    const b = await svc.team({ credits: 100 });
    for (const t of [a, b]) {
      const again = await scrape(t.key);
      expect(again).toEqual({
        __typename: 'MutationScrapeAdLibrarySuccess',
        data: { job_id: jobId, status: 'existing', brand_id: brandId, job: { job_id: jobId, status: 'completed' }, brand: { id: brandId } },
      });
    }
    expect(await creditsUsed(a.teamId)).toBe(10);
    expect(await creditsUsed(b.teamId)).toBe(0);
    const n = await sql<{ n: number }>`select count(*)::int as n from ad_library_scrape_jobs`.execute(svc.app.db);
    expect(n.rows[0]!.n).toBe(1);
  });

  it('a bad URL is a typed AppError validation_error', async () => {
    const t = await svc.team({ credits: 100 });
    for (const url of ['https://example.com/ads/library/?view_all_page_id=1', 'https://www.facebook.com/ads/library/?active_status=all', '']) {
      const res = await scrape(t.key, url);
      expect(res).toMatchObject({ __typename: 'AppError', code: 'validation_error', message: expect.stringMatching(/^url: /) });
    }
    expect(await creditsUsed(t.teamId)).toBe(0);
  });

  it('the 4th scrape within a minute is a typed AppError rate_limited that says how long to wait', async () => {
    const t = await svc.team({ credits: 100 });
    for (let i = 0; i < 3; i++) expect((await scrape(t.key)).data.status).toBe('existing');
    const refused = await scrape(t.key);
    expect(refused).toMatchObject({ __typename: 'AppError', code: 'rate_limited' });
    const wait = Number(/retry in (\d+) s/.exec(refused.message)?.[1]);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    // Per team: another team still gets in.
    const other = await svc.team({ credits: 0 });
    expect((await scrape(other.key)).data.status).toBe('existing');
    expect(await creditsUsed(t.teamId)).toBe(0);
  });

  it('unknown ids read as null, malformed ids are validation_error, and every read needs a key', async () => {
    const known = await client.gql(`query ($id: ID!) { adLibraryAds(brand_id: $id, limit: 1) { items { id } } }`, { id: brandId }, a.key);
    const adId = known.body.data.adLibraryAds.items[0].id;
    const res = await client.gql(
      `query ($id: ID!) { scrapeJob(id: $id) { job_id } adLibraryBrand(id: $id) { id } adLibraryAds(brand_id: $id) { totalCount } adLibraryAd(id: $id) { id } }`,
      { id: MISSING },
      a.key,
    );
    expect(res.body).toEqual({ data: { scrapeJob: null, adLibraryBrand: null, adLibraryAds: null, adLibraryAd: null } });
    const malformed = await client.gql(`{ scrapeJob(id: "nope") { job_id } }`, {}, a.key);
    expect(malformed.body.errors[0].extensions.code).toBe('validation_error');
    for (const q of [`{ adLibraryAd(id: "${adId}") { id } }`, `{ adLibraryBrands { totalCount } }`, `{ scrapeJob(id: "${jobId}") { job_id } }`]) {
      const anonymous = await client.gql(q);
      expect(anonymous.body.errors[0].extensions.code).toBe('unauthorized');
    }
    // As every mutation with typed errors: the refusal is the AppError member of the result.
    const anonymousScrape = await client.gql(SCRAPE, { url: pageUrl() });
    expect(anonymousScrape.body.data.scrapeAdLibrary).toMatchObject({ __typename: 'AppError', code: 'unauthorized' });

    const ws = client.ws(a.key);
    try {
      const outcome = await new Promise<any>((resolve) => {
        ws.subscribe(
          { query: 'subscription ($id: ID!) { scrapeJobUpdated(job_id: $id) { job_id } }', variables: { id: MISSING } },
          { next: resolve, error: resolve, complete: () => resolve('complete') },
        );
      });
      expect(outcome.errors?.[0]?.extensions?.code ?? outcome[0]?.extensions?.code).toBe('not_found');
    } finally {
      await ws.dispose();
    }
  });
});
