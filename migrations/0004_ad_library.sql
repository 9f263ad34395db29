-- The competitor ad library: brands and ads scraped from Meta's Ad Library, shared by every team;
-- the scrape jobs teams pay for; and the request log behind the scrape rate limit.

create table ad_library_brands (
  id uuid primary key default gen_random_uuid(),
  meta_page_id text not null unique,
  name text not null,
  page_url text not null,
  about text not null default '',
  profile_picture_source_url text,
  profile_picture_key text,
  page_categories text[] not null default '{}',
  page_like_count bigint not null default 0,
  -- Set when a scrape of the page completes: until then the brand is not listed.
  scraped_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index ad_library_brands_listed on ad_library_brands (created_at desc, id desc) where scraped_at is not null;

create table ad_library_ads (
  id uuid primary key default gen_random_uuid(),
  brand_id uuid not null references ad_library_brands (id) on delete cascade,
  ad_archive_id text not null unique,
  is_active boolean not null,
  start_date timestamptz not null,
  end_date timestamptz,
  body_text text not null default '',
  title text not null default '',
  cta_text text not null default '',
  cta_type text not null default '',
  link_url text not null default '',
  display_format text not null default '',
  publisher_platforms text[] not null default '{}',
  -- [{type, url (the source's), key (our copy, null when it could not be fetched)}]
  media jsonb not null default '[]',
  thumbnail_url text not null default '',
  eu_total_reach bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index ad_library_ads_brand_start on ad_library_ads (brand_id, start_date desc, id desc);

create table ad_library_scrape_jobs (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  api_key_id uuid references api_keys (id) on delete set null,
  meta_page_id text not null,
  page_url text not null,
  status text not null default 'processing' check (status in ('processing', 'completed', 'failed')),
  credits integer not null check (credits >= 0),
  brand_id uuid references ad_library_brands (id) on delete set null,
  ads_count integer not null default 0,
  error text,
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  check ((status = 'processing') = (completed_at is null))
);
-- One running scrape per page, whoever asked: a second request joins it instead of paying again.
create unique index ad_library_scrape_jobs_running on ad_library_scrape_jobs (meta_page_id) where status = 'processing';
create index ad_library_scrape_jobs_page on ad_library_scrape_jobs (meta_page_id, completed_at desc);

-- Requests counted by a rate limit (a sliding window per team and scope); old rows are purged.
create table rate_limit_hits (
  team_id uuid not null references teams (id) on delete cascade,
  scope text not null,
  at timestamptz not null default clock_timestamp()
);
create index rate_limit_hits_window on rate_limit_hits (team_id, scope, at);
