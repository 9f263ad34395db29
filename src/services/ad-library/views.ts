import type { AdLibraryAdRow, AdLibraryBrandRow, ScrapeJobRow } from '../../db/types.ts';
import type { Storage } from '../../adapters/storage/storage.ts';

export interface AdLibraryBrand {
  id: string;
  name: string;
  meta_page_id: string;
  page_url: string;
  about: string;
  profile_picture_url: string | null;
  page_categories: string[];
  page_like_count: number;
  created_at: string;
}

/** An ad's own fields as answered: the row's, its dates as ISO text, without its media (each view has its own) and our bookkeeping. */
type AdFields = Omit<AdLibraryAdRow, 'start_date' | 'end_date' | 'created_at' | 'updated_at' | 'media' | 'media_expired_at'> & {
  start_date: string;
  end_date: string | null;
  created_at: string;
};
/** In lists media items carry the source's URL; the single-ad read gives our stored copy. */
export interface AdLibraryAdListItem extends AdFields {
  media: { type: 'image' | 'video'; url: string }[];
}
export interface AdLibraryAd extends AdFields {
  media: { type: 'image' | 'video'; r2_url: string | null }[];
}

export interface ScrapeJob {
  job_id: string;
  status: ScrapeJobRow['status'];
  meta_page_id: string;
  brand_id: string | null;
  ads_count: number;
  error: string | null;
  created_at: string;
  completed_at: string | null;
}

export async function brandView(storage: Storage, row: AdLibraryBrandRow): Promise<AdLibraryBrand> {
  return {
    id: row.id,
    name: row.name,
    meta_page_id: row.meta_page_id,
    page_url: row.page_url,
    about: row.about,
    profile_picture_url: row.profile_picture_key ? await storage.signedUrl(row.profile_picture_key) : null,
    page_categories: row.page_categories,
    page_like_count: row.page_like_count,
    created_at: row.created_at.toISOString(),
  };
}

function adFields(row: AdLibraryAdRow): AdFields {
  return {
    id: row.id,
    brand_id: row.brand_id,
    ad_archive_id: row.ad_archive_id,
    is_active: row.is_active,
    start_date: row.start_date.toISOString(),
    end_date: row.end_date ? row.end_date.toISOString() : null,
    body_text: row.body_text,
    title: row.title,
    cta_text: row.cta_text,
    cta_type: row.cta_type,
    link_url: row.link_url,
    display_format: row.display_format,
    publisher_platforms: row.publisher_platforms,
    thumbnail_url: row.thumbnail_url,
    eu_total_reach: row.eu_total_reach,
    created_at: row.created_at.toISOString(),
  };
}

export function adListItemView(row: AdLibraryAdRow): AdLibraryAdListItem {
  return { ...adFields(row), media: row.media.map((m) => ({ type: m.type, url: m.url })) };
}

export async function adView(storage: Storage, row: AdLibraryAdRow): Promise<AdLibraryAd> {
  const media = await Promise.all(row.media.map(async (m) => ({ type: m.type, r2_url: m.key ? await storage.signedUrl(m.key) : null })));
  return { ...adFields(row), media };
}

export function scrapeJobView(row: ScrapeJobRow): ScrapeJob {
  return {
    job_id: row.id,
    status: row.status,
    meta_page_id: row.meta_page_id,
    brand_id: row.brand_id,
    ads_count: row.ads_count,
    error: row.error,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at ? row.completed_at.toISOString() : null,
  };
}
