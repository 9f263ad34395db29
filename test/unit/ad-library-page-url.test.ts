import { describe, expect, it } from 'vitest';
import { parseAdLibraryUrl } from '../../src/domain/ad-library-url.ts';
import {
  adsQuery,
  mapAd,
  mapBrand,
  mediaOf,
  readAdsPage,
  sourceMessage,
  thumbnailOf,
  toIsoDate,
} from '../../src/adapters/ad-library-source/meta-fields.ts';
import { retryAfterMs } from '../../src/adapters/net/retry-after.ts';

const EXPECTED = 'url: must be a Meta Ad Library URL (https://www.facebook.com/ads/library/?view_all_page_id=...)';
const MISSING = 'url: names no brand page (view_all_page_id is missing)';
const NUMERIC = 'url: view_all_page_id must be numeric (a Facebook page id)';
const LIBRARY = 'https://www.facebook.com/ads/library/';

describe('parseAdLibraryUrl', () => {
  it.each([
    [`${LIBRARY}?active_status=all&ad_type=all&country=ALL&view_all_page_id=1234567890&search_type=page&media_type=all`],
    [`${LIBRARY}?view_all_page_id=1234567890`],
    ['https://www.facebook.com/ads/library?view_all_page_id=1234567890'],
    ['https://facebook.com/ads/library/?view_all_page_id=1234567890'],
    ['https://m.facebook.com/ads/library/?view_all_page_id=1234567890'],
    ['https://WWW.Facebook.COM/ads/library/?view_all_page_id=1234567890'],
    ['http://www.facebook.com/ads/library/?view_all_page_id=1234567890'],
    ['www.facebook.com/ads/library/?view_all_page_id=1234567890'],
    ['facebook.com/ads/library/?view_all_page_id=1234567890'],
    [`  ${LIBRARY}?view_all_page_id=1234567890  `],
    [`${LIBRARY}?view_all_page_id=1234567890#top`],
    [`${LIBRARY}?view_all_page_id=1234567890&view_all_page_id=1234567890`],
    [`${LIBRARY}?view_all_page_id=%201234567890`],
  ])('accepts %s', (url) => {
    expect(parseAdLibraryUrl(url)).toEqual({ ok: true, pageId: '1234567890', pageUrl: 'https://www.facebook.com/1234567890' });
  });

  it('keeps long page ids exactly (no number rounding)', () => {
    expect(parseAdLibraryUrl(`${LIBRARY}?view_all_page_id=100064757326512345`)).toMatchObject({ ok: true, pageId: '100064757326512345' });
  });

  it.each([
    ['not a url at all'],
    ['https://'],
    ['ftp://www.facebook.com/ads/library/?view_all_page_id=1'],
    ['javascript:alert(1)'],
    ['https://www.facebook.com.evil.example/ads/library/?view_all_page_id=1'],
    ['https://evil.example/ads/library/?view_all_page_id=1&host=www.facebook.com'],
    ['https://l.facebook.com/ads/library/?view_all_page_id=1'],
    ['https://www.instagram.com/ads/library/?view_all_page_id=1'],
    ['https://www.facebook.com:8443/ads/library/?view_all_page_id=1'],
    ['https://user:pw@www.facebook.com/ads/library/?view_all_page_id=1'],
    ['https://www.facebook.com/acmeoutfitters'],
    ['https://www.facebook.com/ads/library/report/?view_all_page_id=1'],
    ['https://www.facebook.com/ads/libraryx/?view_all_page_id=1'],
    ['https://www.facebook.com/nike/ads/library/?view_all_page_id=1'],
  ])('refuses %s as not an Ad Library URL', (url) => {
    expect(parseAdLibraryUrl(url)).toEqual({ ok: false, message: EXPECTED });
  });

  it.each([
    [`${LIBRARY}?active_status=all&ad_type=all&country=US&q=shoes&search_type=keyword_unordered`],
    [`${LIBRARY}?id=702369045530963`],
    [LIBRARY],
    [`${LIBRARY}?view_all_page_id=`],
    [`${LIBRARY}?view_all_page_id=%20%20`],
    [`${LIBRARY}?page_id=1234567890`],
  ])('refuses %s as naming no page', (url) => {
    expect(parseAdLibraryUrl(url)).toEqual({ ok: false, message: MISSING });
  });

  it.each([['acme'], ['12a4'], ['-1'], ['1.5'], ['0'], ['0123'], ['1e9'], ['１２３'], ['1'.repeat(26)]])(
    'refuses view_all_page_id=%s as not numeric',
    (id) => {
      expect(parseAdLibraryUrl(`${LIBRARY}?view_all_page_id=${encodeURIComponent(id)}`)).toEqual({ ok: false, message: NUMERIC });
    },
  );

  it('refuses two different pages in one URL', () => {
    expect(parseAdLibraryUrl(`${LIBRARY}?view_all_page_id=1&view_all_page_id=2`)).toEqual({
      ok: false,
      message: 'url: names more than one brand page (view_all_page_id is repeated)',
    });
  });

  it('refuses empty and oversized input with the field name', () => {
    expect(parseAdLibraryUrl('')).toEqual({ ok: false, message: 'url: is required' });
    expect(parseAdLibraryUrl('   ')).toEqual({ ok: false, message: 'url: is required' });
    expect(parseAdLibraryUrl(undefined as unknown as string)).toEqual({ ok: false, message: 'url: is required' });
    const long = `${LIBRARY}?view_all_page_id=1&pad=${'x'.repeat(2100)}`;
    expect(parseAdLibraryUrl(long)).toEqual({ ok: false, message: 'url: must be at most 2048 characters' });
  });
});

describe('toIsoDate', () => {
  it.each<[unknown, string | null]>([
    [1735689600, '2025-01-01T00:00:00.000Z'],
    ['1735689600', '2025-01-01T00:00:00.000Z'],
    [1735689600000, '2025-01-01T00:00:00.000Z'],
    ['2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'],
    ['2025-01-01', '2025-01-01T00:00:00.000Z'],
    [null, null],
    [undefined, null],
    ['', null],
    [0, null],
    [-5, null],
    ['yesterday', null],
    [{}, null],
    [Number.NaN, null],
  ])('%j -> %j', (input, expected) => {
    expect(toIsoDate(input)).toBe(expected);
  });
});

describe('mediaOf and thumbnailOf', () => {
  it('lists videos (HD before SD), then images (original before resized), then cards', () => {
    const snapshot = {
      videos: [{ video_hd_url: 'v-hd', video_sd_url: 'v-sd', video_preview_image_url: 'v-poster' }, { video_sd_url: 'v2-sd' }],
      images: [{ original_image_url: 'i-orig', resized_image_url: 'i-small' }, { resized_image_url: 'i2-small' }],
      cards: [{ video_sd_url: 'c-video', original_image_url: 'c-ignored' }, { resized_image_url: 'c-small' }],
    };
    expect(mediaOf(snapshot)).toEqual([
      { type: 'video', url: 'v-hd' },
      { type: 'video', url: 'v2-sd' },
      { type: 'image', url: 'i-orig' },
      { type: 'image', url: 'i2-small' },
      { type: 'video', url: 'c-video' },
      { type: 'image', url: 'c-small' },
    ]);
    expect(thumbnailOf(snapshot)).toBe('v-poster');
  });

  it('drops empty, null and repeated URLs and tolerates junk', () => {
    const snapshot = {
      images: [{ original_image_url: 'same' }, { original_image_url: null, resized_image_url: '' }, 'junk', null],
      cards: [{ original_image_url: 'same' }],
      videos: 'not a list',
    };
    expect(mediaOf(snapshot)).toEqual([{ type: 'image', url: 'same' }]);
    expect(mediaOf(undefined)).toEqual([]);
    expect(mediaOf([])).toEqual([]);
  });

  it('takes the thumbnail from a video poster first, else the first image (resized preferred)', () => {
    expect(thumbnailOf({ images: [{ original_image_url: 'big', resized_image_url: 'small' }], cards: [{ video_preview_image_url: 'card-poster' }] })).toBe(
      'card-poster',
    );
    expect(thumbnailOf({ images: [{ original_image_url: 'big', resized_image_url: 'small' }] })).toBe('small');
    expect(thumbnailOf({ images: [{ original_image_url: 'big' }] })).toBe('big');
    expect(thumbnailOf({})).toBe('');
  });
});

const record = (over: Record<string, unknown> = {}, snapshot: Record<string, unknown> = {}) => ({
  ad_archive_id: '1000000000000001',
  page_id: '42',
  is_active: true,
  start_date: 1735689600,
  end_date: 1767139200,
  publisher_platform: ['FACEBOOK', 'instagram'],
  ...over,
  snapshot: {
    body: { text: ' Hello there ' },
    title: 'Title',
    cta_text: 'Shop now',
    cta_type: 'shop_now',
    link_url: 'https://shop.example/x',
    display_format: 'video',
    videos: [{ video_hd_url: 'hd.mp4', video_preview_image_url: 'poster.png' }],
    ...snapshot,
  },
});

describe('mapAd', () => {
  it('maps every spec field', () => {
    expect(mapAd(record({ eu_total_reach: 1234 }))).toEqual({
      adArchiveId: '1000000000000001',
      isActive: true,
      startDate: '2025-01-01T00:00:00.000Z',
      endDate: null,
      bodyText: 'Hello there',
      title: 'Title',
      ctaText: 'Shop now',
      ctaType: 'SHOP_NOW',
      linkUrl: 'https://shop.example/x',
      displayFormat: 'VIDEO',
      publisherPlatforms: ['FACEBOOK', 'INSTAGRAM'],
      media: [{ type: 'video', url: 'hd.mp4' }],
      thumbnailUrl: 'poster.png',
      euTotalReach: 1234,
    });
  });

  it('keeps the end date of an inactive ad and drops the last-seen date of a running one', () => {
    expect(mapAd(record({ is_active: false }))?.endDate).toBe('2025-12-31T00:00:00.000Z');
    expect(mapAd(record({ is_active: false, end_date: null }))?.endDate).toBeNull();
    expect(mapAd(record({ is_active: true }))?.endDate).toBeNull();
    expect(mapAd(record({ is_active: 'yes' }))?.isActive).toBe(false);
  });

  it('reads eu_total_reach from a merged detail block, else 0', () => {
    expect(mapAd(record({ aaa_info: { eu_total_reach: 77 } }))?.euTotalReach).toBe(77);
    expect(mapAd(record())?.euTotalReach).toBe(0);
    expect(mapAd(record({ eu_total_reach: -3 }))?.euTotalReach).toBe(0);
    expect(mapAd(record({ eu_total_reach: '500' }))?.euTotalReach).toBe(0);
  });

  it('accepts numeric archive ids and a plain-string body (the ad-detail answer)', () => {
    const ad = mapAd(record({ ad_archive_id: 702369045530963 }, { body: 'Plain body' }));
    expect(ad?.adArchiveId).toBe('702369045530963');
    expect(ad?.bodyText).toBe('Plain body');
  });

  it('falls back to the first card when the top level is missing or an unfilled catalog template', () => {
    const ad = mapAd(
      record({}, {
        body: { text: '{{product.brand}}' },
        title: '{{product.name}}',
        cta_text: null,
        cta_type: undefined,
        link_url: '',
        cards: [{ body: 'Card body', title: 'Card title', cta_text: 'Buy', cta_type: 'buy_now', link_url: 'https://card.example' }],
      }),
    );
    expect(ad).toMatchObject({ bodyText: 'Card body', title: 'Card title', ctaText: 'Buy', ctaType: 'BUY_NOW', linkUrl: 'https://card.example' });
    const templateOnly = mapAd(record({}, { body: { text: '{{product.brand}}' }, cards: [] }));
    expect(templateOnly?.bodyText).toBe('{{product.brand}}');
  });

  it('puts the spec defaults where the record has nothing', () => {
    expect(mapAd({ ad_archive_id: '9', start_date: 1735689600 })).toEqual({
      adArchiveId: '9',
      isActive: false,
      startDate: '2025-01-01T00:00:00.000Z',
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
    });
  });

  it('skips records that cannot be stored (no archive id or no start date)', () => {
    expect(mapAd(record({ ad_archive_id: undefined }))).toBeNull();
    expect(mapAd(record({ ad_archive_id: '' }))).toBeNull();
    expect(mapAd(record({ start_date: null }))).toBeNull();
    expect(mapAd(null)).toBeNull();
    expect(mapAd('junk')).toBeNull();
  });
});

describe('mapBrand', () => {
  const page = {
    page_name: 'Acme',
    page_profile_uri: 'https://www.facebook.com/acme/',
    page_profile_picture_url: 'https://cdn.example/p.png',
    page_categories: ['Clothing (Brand)', { name: 'Retail' }, '', 7],
    page_like_count: 48213,
  };

  it('reads the profile from the first record of the page', () => {
    expect(mapBrand('42', [record({}, page)])).toEqual({
      metaPageId: '42',
      name: 'Acme',
      pageUrl: 'https://www.facebook.com/acme/',
      about: '',
      profilePictureUrl: 'https://cdn.example/p.png',
      pageCategories: ['Clothing (Brand)', 'Retail', '7'],
      pageLikeCount: 48213,
    });
  });

  it('prefers a record of the requested page over other pages', () => {
    const other = record({ page_id: '7' }, { page_name: 'Other' });
    expect(mapBrand('42', [other, record({}, page)])?.name).toBe('Acme');
    expect(mapBrand('99', [other])?.metaPageId).toBe('7');
  });

  it('fills the spec defaults when the record has no page fields', () => {
    expect(mapBrand('42', [{ ad_archive_id: '1', page_name: 'From the record' }])).toEqual({
      metaPageId: '42',
      name: 'From the record',
      pageUrl: 'https://www.facebook.com/42',
      about: '',
      profilePictureUrl: null,
      pageCategories: [],
      pageLikeCount: 0,
    });
  });

  it('gives null when there is no record to read', () => {
    expect(mapBrand('42', [])).toBeNull();
  });

  // The sample answer of Company Ads (scrapecreators-cli api-config/apis.js): a branded-content ad
  // the page "Instagram" runs, whose snapshot is the creator's page ("Lalobri") and whose
  // snapshot.branded_content is the advertiser's.
  const branded = record(
    { ad_archive_id: '1162496978867592', page_id: '367152833370567', page_name: 'Instagram' },
    {
      page_id: '378515988682204',
      page_name: 'Lalobri',
      current_page_name: 'Lalobri',
      page_profile_uri: 'https://www.facebook.com/61564084618363/',
      page_profile_picture_url: 'https://cdn.example/creator.jpg',
      page_categories: ['Digital Creator'],
      page_like_count: 841,
      branded_content: {
        page_id: '367152833370567',
        page_name: 'Instagram',
        current_page_name: 'Instagram',
        page_profile_uri: 'https://www.facebook.com/instagram/',
        page_profile_pic_url: 'https://cdn.example/brand.jpg',
        page_categories: ['App page'],
      },
    },
  );

  it("a branded-content ad: the brand is the record's own page, its profile from branded_content, never the creator's snapshot", () => {
    expect(mapBrand('367152833370567', [branded])).toEqual({
      metaPageId: '367152833370567',
      name: 'Instagram',
      pageUrl: 'https://www.facebook.com/instagram/',
      about: '',
      profilePictureUrl: 'https://cdn.example/brand.jpg',
      pageCategories: ['App page'],
      // The snapshot's 841 are the creator's likes; the brand's count is not in this record.
      pageLikeCount: 0,
    });
  });

  it("prefers an ad whose snapshot is the page's own (its likes too) over a branded-content one", () => {
    const own = record({ ad_archive_id: '2', page_id: '367152833370567', page_name: 'Instagram' }, { ...page, page_id: '367152833370567', page_name: 'Instagram' });
    expect(mapBrand('367152833370567', [branded, own])).toMatchObject({ name: 'Instagram', pageUrl: 'https://www.facebook.com/acme/', pageLikeCount: 48213 });
  });

  it("a snapshot naming another page, without branded_content, gives the record's own name and nothing of the other page", () => {
    const other = record({ page_id: '42', page_name: 'Acme' }, { ...page, page_id: '999', page_name: 'Someone else' });
    expect(mapBrand('42', [other])).toEqual({ metaPageId: '42', name: 'Acme', pageUrl: 'https://www.facebook.com/42', about: '', profilePictureUrl: null, pageCategories: [], pageLikeCount: 0 });
  });
});

describe('the list envelope', () => {
  it('asks for active and inactive ads in every country, with the cursor when there is one', () => {
    expect(adsQuery('42', null)).toEqual({ pageId: '42', status: 'ALL', country: 'ALL' });
    expect(adsQuery('42', 'abc')).toEqual({ pageId: '42', status: 'ALL', country: 'ALL', cursor: 'abc' });
  });

  it('reads results and cursor, and refuses other shapes', () => {
    expect(readAdsPage({ success: true, results: [{ a: 1 }, 'junk'], cursor: 'next' })).toEqual({ records: [{ a: 1 }, {}], cursor: 'next' });
    expect(readAdsPage({ results: [], cursor: null })).toEqual({ records: [], cursor: null });
    expect(readAdsPage({ results: [], cursor: '' })).toEqual({ records: [], cursor: null });
    expect(readAdsPage({ searchResults: [] })).toBeNull();
    expect(readAdsPage({ success: false, results: [] })).toBeNull();
    expect(readAdsPage('<html>')).toBeNull();
    expect(readAdsPage(undefined)).toBeNull();
  });

  it("quotes the source's own reason, shortened", () => {
    expect(sourceMessage({ success: false, error: 'unauthorized', message: 'Invalid API key' })).toBe('Invalid API key');
    expect(sourceMessage({ error: 'rate_limited' })).toBe('rate_limited');
    expect(sourceMessage({ error: { message: 'nested' } })).toBe('nested');
    expect(sourceMessage({ message: 'x'.repeat(500) })).toHaveLength(200);
    expect(sourceMessage(undefined)).toBe('');
  });
});

describe('retryAfterMs', () => {
  it('reads delay-seconds and HTTP dates', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:10 GMT', now)).toBe(10_000);
    expect(retryAfterMs('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBeNull();
    expect(retryAfterMs('soon', now)).toBeNull();
  });
});
