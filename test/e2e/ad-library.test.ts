import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
