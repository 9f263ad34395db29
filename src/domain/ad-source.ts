/**
 * What a scrape of the competitor ad library needs from wherever the ads come from. The worker
 * task, storage and REST layers depend on this shape only, so the source can be swapped (another
 * provider, a fake in tests) without touching them. Field meanings follow the spec's
 * "Ad-library brand" and "Ad-library ad" resources.
 */

export interface SourceBrand {
  metaPageId: string;
  name: string;
  pageUrl: string;
  about: string;
  profilePictureUrl: string | null;
  pageCategories: string[];
  pageLikeCount: number;
}

export interface SourceMedia {
  type: 'image' | 'video';
  url: string;
}

export interface SourceAd {
  adArchiveId: string;
  isActive: boolean;
  /** ISO 8601. */
  startDate: string;
  /** ISO 8601; null while the ad is still running. */
  endDate: string | null;
  bodyText: string;
  title: string;
  ctaText: string;
  /** An uppercase code such as SHOP_NOW, or '' when the ad has no button. */
  ctaType: string;
  linkUrl: string;
  displayFormat: string;
  publisherPlatforms: string[];
  media: SourceMedia[];
  thumbnailUrl: string;
  euTotalReach: number;
}

/** One page of results: its ads (active and inactive), and the cursor of the page after it (null: the last). */
export interface SourcePage {
  ads: SourceAd[];
  next: string | null;
}

/**
 * Where the ads come from, one page of results per call. A paid source bills every call, so a
 * scrape asks each page once: the brand comes with the first page, and a cursor names each page
 * after it.
 */
export interface AdSource {
  /** The first page of results, with the brand profile read from it. */
  first(pageId: string, signal: AbortSignal): Promise<SourcePage & { brand: SourceBrand }>;
  /** The page of results a cursor (a page's `next`) names. */
  page(pageId: string, cursor: string, signal: AbortSignal): Promise<SourcePage>;
}

/**
 * - not_found: the source knows no such page (or it has no ads to read a profile from).
 * - unauthorized: the source refused our credentials; retrying cannot help until they change.
 * - throttled: the source kept rate-limiting us past what one scrape may wait; retry later.
 * - failed: anything else (server errors after retries, unreachable, unexpected answers).
 */
export type AdSourceErrorKind = 'not_found' | 'unauthorized' | 'failed' | 'throttled';

/** A failed read from the ad source. `message` is safe to show users: it never holds credentials. */
export class AdSourceError extends Error {
  readonly kind: AdSourceErrorKind;
  /** The HTTP status of the answer that decided the failure, when there was one. */
  readonly status: number | undefined;

  constructor(kind: AdSourceErrorKind, message: string, opts: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'AdSourceError';
    this.kind = kind;
    this.status = opts.status;
  }
}

export const isAdSourceError = (e: unknown): e is AdSourceError => e instanceof AdSourceError;
