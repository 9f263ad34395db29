/**
 * Reads the brand page out of the Ad Library URL a user pastes into POST /ad-library/scrape.
 * Only the Ad Library's "all ads of a page" view names exactly one page
 * (https://www.facebook.com/ads/library/?active_status=all&ad_type=all&country=ALL&view_all_page_id=NNN);
 * keyword searches and single-ad links do not, so they are refused with the reason.
 */

export type AdLibraryUrl = { ok: true; pageId: string; pageUrl: string } | { ok: false; message: string };

const EXPECTED = 'url: must be a Meta Ad Library URL (https://www.facebook.com/ads/library/?view_all_page_id=...)';
const HOSTS = new Set(['www.facebook.com', 'facebook.com', 'm.facebook.com']);
const LIBRARY_PATH = /^\/ads\/library\/?$/;
// Page ids are positive integers; Meta's are 15-17 digits today. A leading zero would let one page
// be stored twice under two spellings.
const PAGE_ID = /^[1-9]\d{0,24}$/;
const MAX_URL_LENGTH = 2048;

const refuse = (message: string): AdLibraryUrl => ({ ok: false, message });

/**
 * `pageUrl` is the brand's own Facebook page (https://www.facebook.com/<id>), the fallback for the
 * brand's page_url until the source tells us its vanity address.
 */
export function parseAdLibraryUrl(url: string): AdLibraryUrl {
  if (typeof url !== 'string' || url.trim() === '') return refuse('url: is required');
  const raw = url.trim();
  if (raw.length > MAX_URL_LENGTH) return refuse(`url: must be at most ${MAX_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    // People paste "facebook.com/ads/library/?..." from the address bar without the scheme.
    parsed = new URL(/^[a-z][a-z\d+.-]*:/i.test(raw) ? raw : `https://${raw}`);
  } catch {
    return refuse(EXPECTED);
  }
  const isWeb = parsed.protocol === 'https:' || parsed.protocol === 'http:';
  if (!isWeb || !HOSTS.has(parsed.hostname) || parsed.port !== '' || parsed.username || parsed.password) {
    return refuse(EXPECTED);
  }
  if (!LIBRARY_PATH.test(parsed.pathname)) return refuse(EXPECTED);

  const values = [...new Set(parsed.searchParams.getAll('view_all_page_id').map((v) => v.trim()))].filter(Boolean);
  if (values.length === 0) return refuse('url: names no brand page (view_all_page_id is missing)');
  if (values.length > 1) return refuse('url: names more than one brand page (view_all_page_id is repeated)');
  const pageId = values[0]!;
  if (!PAGE_ID.test(pageId)) return refuse('url: view_all_page_id must be numeric (a Facebook page id)');
  return { ok: true, pageId, pageUrl: `https://www.facebook.com/${pageId}` };
}
