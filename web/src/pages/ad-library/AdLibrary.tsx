import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { gql, subscribe, unwrap } from '../../api/client.ts';
import { AD_LIBRARY_ADS, AD_LIBRARY_BRANDS, QUOTE_SCRAPE, SCRAPE, SCRAPE_JOB_UPDATED } from '../../api/operations.ts';
import { Empty, ErrorNote, Spinner, when } from '../../components/ui.tsx';

interface AdBrand {
  id: string;
  name: string;
  page_url: string;
  page_like_count: number;
  page_categories: string[];
  profile_picture_url: string | null;
  about: string;
}

interface Ad {
  id: string;
  title: string;
  body_text: string;
  cta_text: string;
  link_url: string;
  is_active: boolean;
  start_date: string;
  end_date: string | null;
  display_format: string;
  publisher_platforms: string[];
  thumbnail_url: string;
  media: { type: string; url: string; r2_url: string | null }[];
}

interface Job {
  job_id: string;
  status: string;
  ads_count: number;
  error: string | null;
  brand_id: string | null;
}

/** Competitors' ads: scrape a brand's ad-library page, then browse brands and their ads with media. */
export function AdLibrary() {
  const [brands, setBrands] = useState<AdBrand[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = useCallback(() => gql<{ adLibraryBrands: { items: AdBrand[] } }>(AD_LIBRARY_BRANDS, { limit: 100 }).then((d) => setBrands(d.adLibraryBrands.items), setError), []);
  useEffect(() => void load(), [load]);
  return (
    <section>
      <h1>Ad library</h1>
      <p className="lead">See what other brands run: paste the ad-library address of a brand's page; its ads are copied here with their images and videos.</p>
      <ScrapeForm onDone={load} />
      <ErrorNote error={error} />
      {brands === null ? (
        <Spinner />
      ) : brands.length === 0 ? (
        <Empty title="No brands scraped yet">
          <p>Scrape a page above (10 credits; free when it was scraped lately).</p>
        </Empty>
      ) : (
        <ul className="gallery">
          {brands.map((b) => (
            <li key={b.id} className="card generation" data-testid="ad-brand">
              <div className="row">
                {b.profile_picture_url && <img className="avatar" src={b.profile_picture_url} alt="" />}
                <strong className="grow">{b.name}</strong>
              </div>
              <span className="hint">
                {b.page_like_count.toLocaleString()} likes · {b.page_categories.join(', ')}
              </span>
              <p className="caption">{b.about}</p>
              <Link to={`/ad-library/${b.id}`}>See the ads</Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function ScrapeForm({ onDone }: { onDone: () => void }) {
  const [url, setUrl] = useState('');
  const [price, setPrice] = useState<number | null>(null);
  const [job, setJob] = useState<Job | null>(null);
  const [error, setError] = useState<unknown>(null);
  const key = useRef(crypto.randomUUID());
  useEffect(() => {
    if (!url.trim()) return setPrice(null);
    const t = setTimeout(() => {
      gql<{ quoteAdLibraryScrape: any }>(QUOTE_SCRAPE, { url: url.trim() }).then(
        (d) => {
          setPrice((unwrap(d.quoteAdLibraryScrape) as { credits: number }).credits);
          setError(null);
        },
        (e) => {
          setPrice(null);
          setError(e);
        },
      );
    }, 300);
    return () => clearTimeout(t);
  }, [url]);
  useEffect(() => {
    if (!job || job.status !== 'processing') return;
    return subscribe<{ scrapeJobUpdated: Job }>(SCRAPE_JOB_UPDATED, { id: job.job_id }, ({ scrapeJobUpdated: j }) => {
      setJob(j);
      if (j.status !== 'processing') onDone();
    });
  }, [job?.job_id, job?.status, onDone]);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      const started = unwrap((await gql<{ scrapeAdLibrary: any }>(SCRAPE, { url: url.trim(), idempotencyKey: key.current })).scrapeAdLibrary) as { job_id: string | null; status: string; brand_id: string | null };
      key.current = crypto.randomUUID();
      if (started.status === 'existing') {
        setJob({ job_id: started.job_id ?? '', status: 'completed', ads_count: 0, error: null, brand_id: started.brand_id });
        onDone();
      } else setJob({ job_id: started.job_id!, status: 'processing', ads_count: 0, error: null, brand_id: null });
    } catch (err) {
      setError(err);
    }
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="Scrape a page">
      <label>
        Ad-library page URL
        <input type="url" required value={url} placeholder="https://www.facebook.com/ads/library/?view_all_page_id=..." onChange={(e) => setUrl(e.target.value)} />
      </label>
      <button type="submit" disabled={!url.trim()}>
        Scrape{price !== null && ` (${price} credits)`}
      </button>
      <ErrorNote error={error} />
      {job && (
        <p role="status" className="wide">
          {job.status === 'processing' ? (
            <>
              <Spinner /> Scraping…
            </>
          ) : job.status === 'completed' ? (
            <>Done{job.ads_count ? `: ${job.ads_count} ads` : ''}. {job.brand_id && <Link to={`/ad-library/${job.brand_id}`}>See the ads</Link>}</>
          ) : (
            <span className="problem">Failed: {job.error ?? 'unknown error'} (refunded)</span>
          )}
        </p>
      )}
    </form>
  );
}

export function AdLibraryBrand() {
  const { id = '' } = useParams();
  const [data, setData] = useState<{ brand: AdBrand | null; ads: Ad[]; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    gql<{ adLibraryBrand: AdBrand | null; adLibraryAds: { items: Ad[]; totalCount: number } | null }>(AD_LIBRARY_ADS, { brand_id: id, limit: 50 }).then(
      (d) => setData({ brand: d.adLibraryBrand, ads: d.adLibraryAds?.items ?? [], total: d.adLibraryAds?.totalCount ?? 0 }),
      setError,
    );
  }, [id]);
  if (error) return <ErrorNote error={error} />;
  if (!data) return <Spinner />;
  if (!data.brand)
    return (
      <section>
        <h1>Brand not found</h1>
        <Link to="/ad-library">← Ad library</Link>
      </section>
    );
  return (
    <section>
      <p>
        <Link to="/ad-library">← Ad library</Link>
      </p>
      <h1>{data.brand.name}</h1>
      <p className="lead">
        {data.total} ads · <a href={data.brand.page_url}>the page</a>
      </p>
      {data.ads.length === 0 ? (
        <Empty title="No ads found for this brand" />
      ) : (
        <ul className="gallery">
          {data.ads.map((ad) => (
            <li key={ad.id} className="card generation" data-testid="ad">
              <div className="thumb">
                <AdMedia ad={ad} />
              </div>
              <div className="row">
                <span className={`badge ${ad.is_active ? 'completed' : 'failed'}`}>{ad.is_active ? 'active' : 'ended'}</span>
                <span className="hint grow">{ad.display_format.toLowerCase()}</span>
                <span className="hint">{ad.publisher_platforms.join(', ').toLowerCase()}</span>
              </div>
              <strong>{ad.title}</strong>
              <p className="caption">{ad.body_text}</p>
              <span className="hint">
                since {when(ad.start_date)}
                {ad.cta_text && ` · ${ad.cta_text}`}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Our stored copy only: the source's own links lie on another site, which this page's policy does not load. */
function AdMedia({ ad }: { ad: Ad }) {
  const first = ad.media.find((m) => m.r2_url);
  if (!first?.r2_url) return <span className="placeholder">{ad.media.length ? 'media not copied' : 'no media'}</span>;
  if (first.type === 'video') return <video src={first.r2_url} controls muted playsInline preload="none" aria-label={ad.title || 'ad video'} />;
  return <img src={first.r2_url} alt={ad.title || 'ad image'} loading="lazy" />;
}
