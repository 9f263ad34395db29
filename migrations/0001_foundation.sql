-- Teams, keys, credits, the team's resources and the platform catalogue.

create table teams (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  tier text not null check (tier in ('free', 'starter', 'pro', 'business')),
  credits_limit integer not null check (credits_limit >= 0),
  credits_used integer not null default 0 check (credits_used >= 0),
  period_started_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  -- The last line of defence for "never spend more than the limit", whatever the concurrency.
  constraint credits_within_limit check (credits_used <= credits_limit)
);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  key_digest bytea not null unique,
  key_hint text not null,
  webhook_url text,
  webhook_secret text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index api_keys_team on api_keys (team_id);

-- Every change of credits_used, so a balance can always be explained.
create table credit_ledger (
  id bigint generated always as identity primary key,
  team_id uuid not null references teams (id) on delete cascade,
  kind text not null check (kind in ('debit', 'refund', 'period_reset', 'limit_set')),
  amount integer not null,
  subject_type text,
  subject_id uuid,
  note text,
  created_at timestamptz not null default now()
);
create index credit_ledger_team on credit_ledger (team_id, created_at);

create table products (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  name text not null,
  description text not null,
  category text not null,
  image_key text not null,
  image_source_url text not null,
  price numeric(14, 2) check (price >= 0),
  currency char(3) not null default 'USD',
  link text,
  created_at timestamptz not null default now()
);
create index products_team_created on products (team_id, created_at desc, id);

create table brands (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  name text not null,
  description text not null default '',
  industry text not null default '',
  website_url text,
  brand_voice text,
  target_audience text,
  brand_color_primary text,
  brand_color_accent text,
  logo_url text,
  reference_image_url text,
  created_at timestamptz not null default now()
);
create index brands_team_created on brands (team_id, created_at desc, id);

-- Platform avatars have no team; custom avatars belong to one.
create table avatars (
  id uuid primary key default gen_random_uuid(),
  team_id uuid references teams (id) on delete cascade,
  avatar_type text not null check (avatar_type in ('platform', 'custom')),
  name text not null check (length(name) between 1 and 50),
  description text,
  gender text check (gender in ('male', 'female')),
  age_group text,
  image_key text not null,
  image_source_url text,
  created_at timestamptz not null default now(),
  check ((avatar_type = 'platform') = (team_id is null))
);
create index avatars_team_created on avatars (team_id, created_at desc, id);

-- Process-wide values that every node sharing this database must agree on (e.g. the link-signing secret).
create table settings (
  name text primary key,
  value text not null,
  created_at timestamptz not null default now()
);
