import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileTypeFromBuffer } from 'file-type';
import { createMetaAdSource, type MetaAdSourceOptions } from '../../src/adapters/ad-library-source/meta-source.ts';
import { createMetaAdSourceProbe, type MetaAdSourceProbeOptions } from '../../src/adapters/ad-library-source/meta-probe.ts';
import { AdSourceError, type AdSource, type SourceAd, type SourcePage } from '../../src/domain/ad-source.ts';
import { download } from '../../src/adapters/net/download.ts';
import { freePort } from '../support/net.ts';
import { cursorFor, FIXTURE_PAGE_ID, startMetaAdLibraryFake, type MetaAdLibraryFake } from '../support/meta-ad-library-fake.ts';

const TOKEN = 'test-token';
let fake: MetaAdLibraryFake;
let waits: number[];

beforeEach(async () => {
  fake = await startMetaAdLibraryFake({ token: TOKEN });
  waits = [];
});
afterEach(() => fake.close());

/** The real adapter against the fake; waits are recorded and kept short. */
function source(over: Partial<MetaAdSourceOptions> = {}): AdSource {
  return createMetaAdSource({
    baseUrl: fake.baseUrl,
    accessToken: TOKEN,
    allowPrivate: true,
    maxAttempts: 3,
    backoffMs: 5,
    maxWaitMs: 1_000,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...over,
  });
}

/** Every page's ads, as a scrape reads them: the first page, then each cursor once (a cursor handed out twice ends it). */
async function readAll(src: AdSource, pageId = FIXTURE_PAGE_ID, signal = AbortSignal.timeout(10_000)): Promise<SourceAd[][]> {
  const pages: SourceAd[][] = [];
  const seen = new Set<string>();
  for (let page: SourcePage | undefined = await src.first(pageId, signal); page; ) {
    if (page.ads.length > 0) pages.push(page.ads);
    const next = page.next;
    if (!next || seen.has(next)) break;
    seen.add(next);
    page = await src.page(pageId, next, signal);
  }
  return pages;
}

const brandOf = async (src: AdSource, pageId: string) => (await src.first(pageId, AbortSignal.timeout(5_000))).brand;

async function failure(p: Promise<unknown>): Promise<AdSourceError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AdSourceError);
  return e as AdSourceError;
}

describe('meta ad source: reading', () => {
  it('reads every page in order, with the key, asking for active and inactive ads', async () => {
    const pages = await readAll(source());
    expect(pages.map((p) => p.map((a) => a.adArchiveId))).toEqual([
      ['1000000000000001', '1000000000000002'],
      ['1000000000000003', '1000000000000004'],
      ['1000000000000005'], // the record without an archive id is skipped
    ]);
    const asked = fake.adsRequests();
    expect(asked.map((r) => r.page)).toEqual([0, 1, 2]);
    expect(asked.map((r) => r.query.cursor)).toEqual([undefined, cursorFor(1), cursorFor(2)]);
    for (const r of asked) {
      expect(r.apiKey).toBe(TOKEN);
      expect(r.query).toMatchObject({ pageId: FIXTURE_PAGE_ID, status: 'ALL', country: 'ALL' });
      expect(r.status).toBe(200);
    }
    expect(waits).toEqual([]);
  });

  it('maps every field exactly', async () => {
    const ads = (await readAll(source())).flat();
    const m = fake.mediaUrl;
    expect(ads).toEqual([
      {
        adArchiveId: '1000000000000001',
        isActive: true,
        startDate: '2025-01-01T00:00:00.000Z',
        endDate: null,
        bodyText: 'Summer linen, now in sand and sage.',
        title: 'Linen Shirt',
        ctaText: 'Shop now',
        ctaType: 'SHOP_NOW',
        linkUrl: 'https://acme.example/linen',
        displayFormat: 'IMAGE',
        publisherPlatforms: ['FACEBOOK', 'INSTAGRAM'],
        media: [{ type: 'image', url: m('linen.png') }],
        thumbnailUrl: m('linen-small.png'),
        euTotalReach: 0,
      },
      {
        adArchiveId: '1000000000000002',
        isActive: false,
        startDate: '2024-10-01T00:00:00.000Z',
        endDate: '2024-11-01T00:00:00.000Z',
        bodyText: 'Autumn, in motion.',
        title: 'The Autumn Film',
        ctaText: 'Learn more',
        ctaType: 'LEARN_MORE',
        linkUrl: 'https://acme.example/autumn',
        displayFormat: 'VIDEO',
        publisherPlatforms: ['FACEBOOK', 'AUDIENCE_NETWORK'],
        media: [{ type: 'video', url: m('autumn.mp4') }],
        thumbnailUrl: m('autumn-poster.png'),
        euTotalReach: 15230,
      },
      {
        adArchiveId: '1000000000000003',
        isActive: true,
        startDate: '2025-02-01T00:00:00.000Z',
        endDate: null,
        bodyText: 'Wool coat, 30% off this week.',
        title: 'Wool Coat',
        ctaText: 'Shop now',
        ctaType: 'SHOP_NOW',
        linkUrl: 'https://acme.example/coat',
        displayFormat: 'DCO',
        publisherPlatforms: ['INSTAGRAM', 'MESSENGER'],
        media: [
          { type: 'image', url: m('coat.png') },
          { type: 'video', url: m('scarf.mp4') },
        ],
        thumbnailUrl: m('scarf-poster.png'),
        euTotalReach: 98765,
      },
      {
        adArchiveId: '1000000000000004',
        isActive: false,
        startDate: '2024-01-01T00:00:00.000Z',
        endDate: null,
        bodyText: '',
        title: '',
        ctaText: '',
        ctaType: '',
        linkUrl: '',
        displayFormat: '',
        publisherPlatforms: [],
        media: [],
        thumbnailUrl: '',
        euTotalReach: 0,
      },
      {
        adArchiveId: '1000000000000005',
        isActive: true,
        startDate: '2025-03-01T00:00:00.000Z',
        endDate: null,
        bodyText: 'New in: the field jacket.',
        title: 'Field Jacket',
        ctaText: 'Order now',
        ctaType: 'ORDER_NOW',
        linkUrl: 'https://acme.example/jacket',
        displayFormat: 'IMAGE',
        publisherPlatforms: ['THREADS'],
        media: [{ type: 'image', url: m('jacket-small.png') }],
        thumbnailUrl: m('jacket-small.png'),
        euTotalReach: 0,
      },
    ]);
  });

  it('lists active and inactive ads, and the media links lead to real images and videos', async () => {
    const ads = (await readAll(source())).flat();
    expect(ads.filter((a) => a.isActive)).toHaveLength(3);
    expect(ads.filter((a) => !a.isActive)).toHaveLength(2);
    const media = ads.flatMap((a) => a.media);
    expect(new Set(media.map((x) => x.type))).toEqual(new Set(['image', 'video']));
    for (const item of media) {
      const got = await download(item.url, { maxBytes: 1024 * 1024, allowPrivate: true });
      const sniffed = await fileTypeFromBuffer(got.bytes);
      expect(sniffed?.mime, item.url).toBe(item.type === 'image' ? 'image/png' : 'video/mp4');
    }
  });

  it('reads the brand profile from the page', async () => {
    const brand = await brandOf(source(), FIXTURE_PAGE_ID);
    expect(brand).toEqual({
      metaPageId: FIXTURE_PAGE_ID,
      name: 'Acme Outfitters',
      pageUrl: 'https://www.facebook.com/acmeoutfitters/',
      about: '',
      profilePictureUrl: fake.mediaUrl('profile.png'),
      pageCategories: ['Clothing (Brand)', 'Shopping & retail'],
      pageLikeCount: 48213,
    });
    expect(fake.adsRequests()).toHaveLength(1);
  });

  it("a page whose first ad is branded content: the brand is the page itself, not the creator the ad's snapshot shows", async () => {
    // Shaped as the sample answer of Company Ads (scrapecreators-cli api-config/apis.js): the snapshot is the creator's page, branded_content the advertiser's.
    fake.control.pages.set('367152833370567', [
      [
        {
          ad_archive_id: '1162496978867592',
          page_id: '367152833370567',
          page_name: 'Instagram',
          is_active: true,
          start_date: 1740643200,
          publisher_platform: ['INSTAGRAM'],
          snapshot: {
            page_id: '378515988682204',
            page_name: 'Lalobri',
            page_profile_uri: 'https://www.facebook.com/61564084618363/',
            page_profile_picture_url: fake.mediaUrl('creator.png'),
            page_categories: ['Digital Creator'],
            page_like_count: 841,
            branded_content: {
              page_id: '367152833370567',
              page_name: 'Instagram',
              page_profile_uri: 'https://www.facebook.com/instagram/',
              page_profile_pic_url: fake.mediaUrl('brand.png'),
              page_categories: ['App page'],
            },
            body: { text: 'A creator tells of the app.' },
            display_format: 'VIDEO',
            videos: [],
            images: [],
            cards: [],
          },
        },
      ],
    ]);
    expect(await brandOf(source(), '367152833370567')).toEqual({
      metaPageId: '367152833370567',
      name: 'Instagram',
      pageUrl: 'https://www.facebook.com/instagram/',
      about: '',
      profilePictureUrl: fake.mediaUrl('brand.png'),
      pageCategories: ['App page'],
      pageLikeCount: 0,
    });
  });

  it('reports an unknown page, and a page without ads, as not_found', async () => {
    const unknown = await failure(brandOf(source(), '999'));
    expect(unknown.kind).toBe('not_found');
    expect(unknown.message).toBe('the Ad Library source knows no page 999 (HTTP 404: Company not found)');
    await expect(readAll(source(), '999')).rejects.toMatchObject({ kind: 'not_found' });

    fake.control.pages.set('777', []);
    const empty = await failure(brandOf(source(), '777'));
    expect(empty.kind).toBe('not_found');
    expect(empty.message).toMatch(/no ads for page 777/);
  });

  it('stops when the source hands out a cursor it already gave', async () => {
    fake.control.repeatCursor = true;
    fake.control.pages.set('55', [[{ ad_archive_id: '1', start_date: 1735689600 }], [{ ad_archive_id: '2', start_date: 1735689600 }]]);
    const pages = await readAll(source(), '55');
    // The first page names itself as next: read once more (storage upserts by archive id), then stop.
    expect(pages.map((p) => p.map((a) => a.adArchiveId))).toEqual([['1'], ['1']]);
    expect(fake.adsRequests().map((r) => r.page)).toEqual([0, 0]);
  });
});

describe('meta ad source: long cursors (ScrapeCreators: "If the cursor becomes too large ... use POST")', () => {
  it('sends a cursor too long for a GET request line by POST, the same parameters as a JSON body', async () => {
    // A cursor of about 9,300 characters, as after long pagination: past the fake's 8 KiB request line.
    fake.control.cursorPadding = 7_000;
    const pages = await readAll(source());
    expect(pages.flat().map((a) => a.adArchiveId)).toHaveLength(5);
    const asked = fake.adsRequests();
    expect(asked.map((r) => [r.method, r.page, r.status])).toEqual([
      ['GET', 0, 200],
      ['POST', 1, 200],
      ['POST', 2, 200],
    ]);
    for (const [i, r] of asked.slice(1).entries()) {
      expect(r.query).toEqual({});
      expect(r.body).toEqual({ pageId: FIXTURE_PAGE_ID, status: 'ALL', country: 'ALL', cursor: cursorFor(i + 1, 7_000) });
      expect(r.apiKey).toBe(TOKEN);
    }
    expect(waits).toEqual([]);
  });

  it('sends a GET refused as too long (414) again at once by POST, and POSTs cursors as long from then on', async () => {
    // The source's front server allows less than ours assumes: it answers 414 to a ~1,000-character cursor.
    fake.control.maxGetTarget = 600;
    fake.control.cursorPadding = 700;
    const pages = await readAll(source());
    expect(pages.flat()).toHaveLength(5);
    expect(fake.adsRequests().map((r) => [r.method, r.page, r.status])).toEqual([
      ['GET', 0, 200],
      ['GET', undefined, 414],
      ['POST', 1, 200],
      ['POST', 2, 200],
    ]);
    expect(waits).toEqual([]);
  });

  it('keeps short cursors on GET, as ScrapeCreators asks ("Use GET for normal requests")', async () => {
    await readAll(source());
    expect(fake.adsRequests().map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
  });
});

describe('meta ad source: throttling and failures', () => {
  it('waits out 429 with Retry-After and resumes the same page', async () => {
    fake.control.throttle = { times: 2, retryAfter: '1', onPage: 1 };
    const ads = (await readAll(source())).flat();
    expect(ads).toHaveLength(5);
    expect(fake.adsRequests().map((r) => [r.page, r.status])).toEqual([
      [0, 200],
      [1, 429],
      [1, 429],
      [1, 200],
      [2, 200],
    ]);
    expect(waits).toEqual([1000, 1000]);
  });

  it('backs off exponentially on 429 without Retry-After, with real (short) waits', async () => {
    fake.control.throttle = { times: 2 };
    const started = Date.now();
    const ads = (await readAll(source({ sleep: undefined, backoffMs: 20, maxAttempts: 3 }))).flat();
    expect(ads).toHaveLength(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(20 + 40 - 5);
    expect(fake.adsRequests().map((r) => r.status)).toEqual([429, 429, 200, 200, 200]);
  });

  it('gives up as throttled when the source keeps rate-limiting', async () => {
    fake.control.throttle = { times: 100 };
    const e = await failure(readAll(source()));
    expect(e.kind).toBe('throttled');
    expect(e.status).toBe(429);
    expect(e.message).toBe('the Ad Library source was still rate-limiting after 3 tries; try again later');
    expect(fake.adsRequests()).toHaveLength(3);
    expect(waits).toEqual([5, 10]);
  });

  it('does not sleep through a Retry-After longer than maxWaitMs', async () => {
    fake.control.throttle = { times: 1, retryAfter: '3600' };
    const e = await failure(readAll(source()));
    expect(e.kind).toBe('throttled');
    expect(e.message).toBe('the Ad Library source asks to wait 3600 s before trying again; try again later');
    expect(waits).toEqual([]);
  });

  it('retries server errors and resumes', async () => {
    fake.control.fail = { times: 2, status: 503, onPage: 2 };
    const ads = (await readAll(source())).flat();
    expect(ads).toHaveLength(5);
    expect(fake.adsRequests().map((r) => r.status)).toEqual([200, 200, 503, 503, 200]);
    expect(waits).toEqual([5, 10]);
  });

  it('throws a clear error after maxAttempts when the source keeps failing', async () => {
    fake.control.fail = { times: 'always' };
    const e = await failure(readAll(source({ maxAttempts: 4 })));
    expect(e.kind).toBe('failed');
    expect(e.status).toBe(500);
    expect(e.message).toBe('the Ad Library source answered HTTP 500 (4 attempts)');
    expect(fake.adsRequests()).toHaveLength(4);
    expect(waits).toEqual([5, 10, 20]);
  });

  it('caps the backoff at maxWaitMs', async () => {
    fake.control.fail = { times: 'always' };
    await failure(readAll(source({ maxAttempts: 5, backoffMs: 300, maxWaitMs: 1000 })));
    expect(waits).toEqual([300, 600, 1000, 1000]);
  });

  it('fails at once, without retrying, on an invalid token, and never repeats the token', async () => {
    const e = await failure(readAll(source({ accessToken: 'wrong-secret-token' })));
    expect(e.kind).toBe('unauthorized');
    expect(e.status).toBe(401);
    expect(e.message).toBe('the Ad Library source refused the access token (HTTP 401: Invalid API key [redacted])');
    expect(e.message).not.toContain('wrong-secret-token');
    expect(fake.adsRequests()).toHaveLength(1);
    expect(fake.adsRequests()[0]?.apiKey).toBe('wrong-secret-token');
    expect(waits).toEqual([]);
  });

  it('says so when the source needs a token and none is configured', async () => {
    const e = await failure(brandOf(source({ accessToken: undefined }), FIXTURE_PAGE_ID));
    expect(e.kind).toBe('unauthorized');
    expect(e.message).toBe('the Ad Library source requires an access token, and none is configured (HTTP 401: Invalid API key)');
    expect(fake.adsRequests()[0]?.apiKey).toBeUndefined();
  });

  it('sends no key when none is configured and the source needs none', async () => {
    fake.control.token = null;
    expect((await readAll(source({ accessToken: '' }))).flat()).toHaveLength(5);
    expect(fake.adsRequests().every((r) => r.apiKey === undefined)).toBe(true);
  });

  it('fails at once on other 4xx answers, quoting the source', async () => {
    fake.control.fail = { times: 'always', status: 402 };
    const e = await failure(readAll(source()));
    expect(e.kind).toBe('failed');
    expect(e.message).toBe('the Ad Library source rejected the request (HTTP 402: upstream failed)');
    expect(fake.adsRequests()).toHaveLength(1);
  });

  it('does not ask again for a page whose answer did not come in time: the source made it and bills it', async () => {
    fake.control.delayMs = 2_000;
    const e = await failure(readAll(source({ timeoutMs: 100, maxAttempts: 2 })));
    expect(e.kind).toBe('failed');
    expect(e.message).toBe('the Ad Library source did not answer within 0.1 s; the page was not asked again, since the source bills every call');
    expect(e.status).toBeUndefined();
    expect(fake.adsRequests()).toHaveLength(1);
    expect(fake.billed).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('fails at once, without retrying, when the key has no credits left (402)', async () => {
    fake.control.credits = 0;
    const e = await failure(readAll(source()));
    expect(e.kind).toBe('failed');
    expect(e.status).toBe(402);
    expect(e.message).toBe('the Ad Library source rejected the request (HTTP 402: No credits remaining)');
    expect(fake.adsRequests()).toHaveLength(1);
    expect(fake.billed).toHaveLength(0);
  });

  it('does not ask again for a page whose answer was cut off', async () => {
    fake.control.cutAnswers = 1;
    const e = await failure(readAll(source({ maxAttempts: 3 })));
    expect(e.kind).toBe('failed');
    expect(e.message).toBe('the answer of the Ad Library source was cut off; the page was not asked again, since the source bills every call');
    expect(fake.billed).toHaveLength(1);
  });

  it('retries an unreachable source, then says it could not be reached', async () => {
    const port = await freePort();
    const e = await failure(readAll(source({ baseUrl: `http://127.0.0.1:${port}`, maxAttempts: 2 })));
    expect(e.kind).toBe('failed');
    expect(e.message).toBe('the Ad Library source could not be reached (2 attempts)');
    expect(waits).toEqual([5]);
  });

  it('refuses a source on a private address unless allowed', async () => {
    const e = await failure(readAll(source({ allowPrivate: false })));
    expect(e.kind).toBe('failed');
    expect(e.message).toBe('the Ad Library source is at a private or reserved address');
    expect(fake.requests).toHaveLength(0);
  });

  it('fails at once on an answer that is not the documented format', async () => {
    fake.control.htmlAnswer = true;
    const e = await failure(readAll(source()));
    expect(e.kind).toBe('failed');
    expect(e.message).toBe('the Ad Library source answered in an unexpected format (no list of ads)');
    expect(fake.adsRequests()).toHaveLength(1);
  });

  it('quotes the source when a 404 comes from a wrong base URL rather than an unknown page', async () => {
    const e = await failure(readAll(source({ baseUrl: `${fake.baseUrl}/api/` })));
    expect(e.kind).toBe('not_found');
    expect(e.message).toBe('the Ad Library source knows no page 1234567890 (HTTP 404: not_found)');
    expect(fake.requests[0]?.path).toBe('/api/v1/facebook/adLibrary/company/ads');
  });

  it('cuts a real backoff wait short when the caller aborts', async () => {
    fake.control.fail = { times: 'always' };
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('worker shutting down')), 50);
    const started = Date.now();
    const src = source({ sleep: undefined, backoffMs: 10_000, maxWaitMs: 10_000 });
    await expect(readAll(src, FIXTURE_PAGE_ID, controller.signal)).rejects.toThrow('worker shutting down');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('asks one page per call: the first page names the cursor of the next', async () => {
    const first = await source().first(FIXTURE_PAGE_ID, AbortSignal.timeout(5_000));
    expect(first.ads).toHaveLength(2);
    expect(first.next).toBe(cursorFor(1));
    expect(fake.adsRequests()).toHaveLength(1);
  });

  it('stops when the caller aborts, with the abort reason rather than a source error', async () => {
    fake.control.throttle = { times: 5 };
    const controller = new AbortController();
    const src = source({
      sleep: async () => {
        controller.abort(new Error('job cancelled'));
      },
    });
    await expect(readAll(src, FIXTURE_PAGE_ID, controller.signal)).rejects.toThrow('job cancelled');
    expect(fake.adsRequests()).toHaveLength(1);
  });
});

describe('meta ad source: the free check (adforge providers check)', () => {
  const probe = (over: Partial<MetaAdSourceProbeOptions> = {}) => createMetaAdSourceProbe({ baseUrl: fake.baseUrl, accessToken: TOKEN, allowPrivate: true, ...over });

  it('ok: the key is accepted, with the credits left, read from the credit balance', async () => {
    fake.control.credits = 1234;
    expect(await probe().check([], AbortSignal.timeout(5_000))).toEqual([{ target: 'key', outcome: 'ok', detail: 'the key is accepted; 1234 credits left' }]);
    expect(fake.requests.map((r) => [r.method, r.path, r.apiKey, r.status])).toEqual([['GET', '/v1/account/credit-balance', TOKEN, 200]]);
  });

  it('key_refused: a wrong key, in the source words, the key never repeated', async () => {
    const [key] = await probe({ accessToken: 'wrong-key-123' }).check([], AbortSignal.timeout(5_000));
    expect(key).toEqual({ target: 'key', outcome: 'key_refused', detail: 'the source refused the key (HTTP 401: Invalid API key [redacted])' });
  });

  it('no credits left: failed, saying every scrape would be refused', async () => {
    fake.control.credits = 0;
    const [key] = await probe().check([], AbortSignal.timeout(5_000));
    expect(key).toMatchObject({ target: 'key', outcome: 'failed', detail: expect.stringMatching(/accepted, but it has 0 credits left/) });
  });

  it('unreachable: nothing listens at the base URL', async () => {
    const [key] = await probe({ baseUrl: `http://127.0.0.1:${await freePort()}` }).check([], AbortSignal.timeout(5_000));
    expect(key).toMatchObject({ target: 'key', outcome: 'unreachable' });
  });
});
