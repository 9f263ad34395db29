/**
 * The one place that knows the source's field names.
 *
 * Format implemented: the public Meta Ad Library's own ad record (the JSON behind
 * facebook.com/ads/library: `ad_archive_id`, `is_active`, `start_date`, `snapshot.*`), as the
 * ScrapeCreators Facebook Ad Library API passes it through (its contract, with sources:
 * test/contracts/scrapecreators/):
 *   GET {base}/v1/facebook/adLibrary/company/ads?pageId=&status=ALL&country=ALL&cursor=
 *   header x-api-key -> { results: AdRecord[], cursor: string | null }; 401 bad key, 402 no credits,
 *   404 unknown page, 429 rate limited. https://docs.scrapecreators.com/v1/facebook/adlibrary/company/ads/
 *   A cursor too long for a GET goes by POST to the same path, the same parameters as a JSON body
 *   (see MAX_GET_TARGET). The key is checked for free by GET {base}/v1/account/credit-balance
 *   -> { creditCount }.
 * The record's fields (incl. `aaa_info.eu_total_reach` on the ad-detail answer):
 *   https://docs.scrapecreators.com/v1/facebook/adlibrary/ad/
 * Why not Meta's Graph API `ads_archive` (https://developers.facebook.com/docs/graph-api/reference/ads_archive/):
 * it returns no media URLs, CTA, link or display format (only `ad_snapshot_url`), and commercial
 * ads only when delivered to the EU/UK, so most spec fields would always be empty.
 *
 * Spec field <- source (what we put when the source lacks it):
 *   brand: meta_page_id <- the record's page_id | the requested id; name <- the record's page_name;
 *   the rest from the page's own profile in the record: the snapshot when snapshot.page_id is the
 *   page, else snapshot.branded_content when its page_id is (a branded-content ad: the snapshot is
 *   then the creator's page, as the sample answer of Company Ads in apis.js shows), else none:
 *   page_url <- page_profile_uri ('https://www.facebook.com/<id>'); about <- none, always '';
 *   profile_picture_url <- page_profile_picture_url | page_profile_pic_url (null);
 *   page_categories <- page_categories ([]); page_like_count <- the page's own snapshot's
 *   page_like_count (0). Read from the page's ad records, one whose snapshot is the page's own
 *   first: the Ad Library has no profile endpoint, its page header is built from the same fields.
 *   ad: ad_archive_id <- ad_archive_id (record skipped without it); is_active <- is_active;
 *   start_date <- start_date, unix seconds -> ISO (record skipped without it);
 *   end_date <- end_date -> ISO, null while active (for a running ad it is only the day last seen);
 *   body_text, title, cta_text, cta_type (uppercased), link_url <- snapshot.body.text, .title, .cta_text,
 *   .cta_type, .link_url, else the first carousel card's (catalog ads carry `{{product.x}}` templates
 *   at the top level) ('' each); display_format <- snapshot.display_format, uppercased as the list
 *   answer gives it (''); publisher_platforms <- publisher_platform, uppercased ([]);
 *   media <- snapshot.videos, .images, .cards: a video's video_hd_url | video_sd_url, an image's
 *   original_image_url | resized_image_url ([]);
 *   thumbnail_url <- first video_preview_image_url, else first image's resized | original ('');
 *   eu_total_reach <- eu_total_reach | aaa_info.eu_total_reach, present only where a provider merged
 *   the ad's detail page in; the list endpoint lacks it (0).
 */
import type { SourceAd, SourceBrand, SourceMedia } from '../../domain/ad-source.ts';

export const ADS_PATH = 'v1/facebook/adLibrary/company/ads';
export const CREDIT_BALANCE_PATH = 'v1/account/credit-balance';
export const TOKEN_HEADER = 'x-api-key';

/**
 * The longest request line (path and query) sent by GET; a longer one goes by POST. ScrapeCreators
 * (scrapecreators-cli api-config/apis.js, Company Ads): "Use GET for normal requests. If the cursor
 * becomes too large after extensive pagination, use POST and send the same parameters in the JSON
 * body." It names no length, so this one is ours: about 2 KB, the smallest limit in common use
 * (old browsers, some proxies; nginx allows 8 KiB by default, Cloudflare 16 KB), far above a
 * first page's cursor (~70 characters). A 414 to a shorter GET lowers it (meta-source.ts).
 */
export const MAX_GET_TARGET = 2_000;

/** One page's request: by GET with the parameters in the query, or by POST with them as JSON. */
export type AdsRequest = { method: 'GET'; url: URL; target: number } | { method: 'POST'; url: URL; target: number; body: string };

export function adsRequest(base: URL, pageId: string, cursor: string | null, maxGetTarget = MAX_GET_TARGET): AdsRequest {
  const params = adsQuery(pageId, cursor);
  const get = new URL(ADS_PATH, base);
  for (const [k, v] of Object.entries(params)) get.searchParams.set(k, v);
  const target = get.pathname.length + get.search.length;
  if (target <= maxGetTarget) return { method: 'GET', url: get, target };
  return { method: 'POST', url: new URL(ADS_PATH, base), target, body: JSON.stringify(params) };
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
const first = (...values: unknown[]): string => values.map(text).find((v) => v !== '') ?? '';
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);
const isTemplate = (s: string): boolean => /\{\{[^}]*\}\}/.test(s);

export function adsQuery(pageId: string, cursor: string | null): Record<string, string> {
  const q: Record<string, string> = { pageId, status: 'ALL', country: 'ALL' };
  if (cursor) q.cursor = cursor;
  return q;
}

/** One page of the list answer, or null when the body is not that shape. */
export function readAdsPage(body: unknown): { records: Obj[]; cursor: string | null } | null {
  const b = obj(body);
  if (!Array.isArray(b.results) || b.success === false) return null;
  return { records: b.results.map(obj), cursor: text(b.cursor) || null };
}

/** The source's own words about a refusal (`message`, else `error`), for error messages. */
export function sourceMessage(body: unknown): string {
  const b = obj(body);
  return first(b.message, b.error, obj(b.error).message).slice(0, 200);
}

/** Unix seconds (or milliseconds, or an ISO string) to ISO 8601; null when unusable. */
export function toIsoDate(v: unknown): string | null {
  let ms: number;
  if (typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v.trim()))) {
    const n = Number(v);
    ms = n > 1e12 ? n : n * 1000;
  } else if (typeof v === 'string' && v.trim() !== '') {
    ms = Date.parse(v);
  } else return null;
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : null;
}

export function mediaOf(snapshot: unknown): SourceMedia[] {
  const s = obj(snapshot);
  const found: SourceMedia[] = [];
  const add = (type: SourceMedia['type'], url: string) => {
    if (url && !found.some((m) => m.url === url)) found.push({ type, url });
  };
  for (const v of list(s.videos).map(obj)) add('video', first(v.video_hd_url, v.video_sd_url));
  for (const i of list(s.images).map(obj)) add('image', first(i.original_image_url, i.resized_image_url));
  for (const c of list(s.cards).map(obj)) {
    const video = first(c.video_hd_url, c.video_sd_url);
    if (video) add('video', video);
    else add('image', first(c.original_image_url, c.resized_image_url));
  }
  return found;
}

export function thumbnailOf(snapshot: unknown): string {
  const s = obj(snapshot);
  const parts = [...list(s.videos), ...list(s.images), ...list(s.cards)].map(obj);
  return first(...parts.map((p) => p.video_preview_image_url), ...parts.map((p) => first(p.resized_image_url, p.original_image_url)));
}

/** A card's value when the top-level one is missing or an unfilled catalog template. */
function creative(s: Obj, card: Obj, read: (o: Obj) => unknown): string {
  const top = text(read(s));
  return top && !isTemplate(top) ? top : first(read(card), top);
}
const field = (key: string) => (o: Obj) => o[key];
// The list answer nests the text (`body.text`); the ad-detail answer and cards give a plain string.
const body = (o: Obj) => (typeof o.body === 'string' ? o.body : obj(o.body).text);

export function mapAd(record: unknown): SourceAd | null {
  const r = obj(record);
  const s = obj(r.snapshot);
  const card = obj(list(s.cards)[0]);
  const adArchiveId = text(r.ad_archive_id);
  const startDate = toIsoDate(r.start_date);
  if (!adArchiveId || !startDate) return null;
  const isActive = r.is_active === true;
  return {
    adArchiveId,
    isActive,
    startDate,
    endDate: isActive ? null : toIsoDate(r.end_date),
    bodyText: creative(s, card, body),
    title: creative(s, card, field('title')),
    ctaText: creative(s, card, field('cta_text')),
    ctaType: creative(s, card, field('cta_type')).toUpperCase(),
    linkUrl: creative(s, card, field('link_url')),
    displayFormat: text(s.display_format).toUpperCase(),
    publisherPlatforms: list(r.publisher_platform).map(text).filter(Boolean).map((p) => p.toUpperCase()),
    media: mediaOf(s),
    thumbnailUrl: thumbnailOf(s),
    euTotalReach: count(r.eu_total_reach ?? obj(r.aaa_info).eu_total_reach),
  };
}

/**
 * The profile an ad record gives of `pageId`: the snapshot when it is that page's own; for a
 * branded-content ad (the snapshot is then the creator's page), `snapshot.branded_content`, the
 * advertiser's. A snapshot that names no page at all is taken as the record's own. Otherwise none.
 */
function profileOf(r: Obj, pageId: string): Obj | undefined {
  const s = obj(r.snapshot);
  const branded = obj(s.branded_content);
  if (text(s.page_id) === pageId) return s;
  if (text(branded.page_id) === pageId) return branded;
  return text(s.page_id) === '' && Object.keys(branded).length === 0 ? s : undefined;
}

/** The page's profile from its ad records; null when there is no record to read it from. */
export function mapBrand(pageId: string, records: unknown[]): SourceBrand | null {
  const all = records.map(obj);
  const ofPage = all.filter((x) => text(x.page_id) === pageId);
  // An ad whose snapshot is the page itself gives the whole profile (its likes too); a branded-content one gives part of it.
  const r = ofPage.find((x) => text(obj(x.snapshot).page_id) === pageId) ?? ofPage.find((x) => profileOf(x, pageId)) ?? ofPage[0] ?? all[0];
  if (!r) return null;
  const id = text(r.page_id) || pageId;
  const p = profileOf(r, id) ?? {};
  const own = p === obj(r.snapshot);
  const categories = list(p.page_categories).map((c) => first(c, obj(c).name)).filter(Boolean);
  return {
    metaPageId: id,
    name: first(r.page_name, p.page_name, p.current_page_name),
    pageUrl: first(p.page_profile_uri) || `https://www.facebook.com/${id}`,
    about: '',
    // The snapshot names it page_profile_picture_url, branded_content page_profile_pic_url.
    profilePictureUrl: first(p.page_profile_picture_url, p.page_profile_pic_url) || null,
    pageCategories: categories,
    // Only a page's own snapshot counts its likes.
    pageLikeCount: own ? count(p.page_like_count) : 0,
  };
}
