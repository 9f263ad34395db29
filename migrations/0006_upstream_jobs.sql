-- A generation attempt that goes to an upstream provider, recorded before anything is sent:
-- submitting (our attempt id is the row id) -> submitted (the provider's job id committed
-- before any waiting) -> succeeded / failed / cancelled. At most one live attempt per generation.
create table upstream_jobs (
  id uuid primary key default gen_random_uuid(),
  generation_id uuid not null references generations (id) on delete cascade,
  provider text not null,
  state text not null default 'submitting' check (state in ('submitting', 'submitted', 'succeeded', 'failed', 'cancelled')),
  provider_job_id text,
  -- What the adapter needs to find the job again (endpoint, status and result URLs); never a key.
  handle jsonb not null default '{}',
  -- The provider's own figure, where it reports one.
  cost numeric,
  error text,
  polls integer not null default 0,
  -- Result links that failed to download and were asked of the provider again.
  refetches integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((state = 'submitting') = (provider_job_id is null) or state in ('failed', 'cancelled'))
);
create unique index upstream_jobs_one_live on upstream_jobs (generation_id) where state in ('submitting', 'submitted');
create index upstream_jobs_generation on upstream_jobs (generation_id, created_at);

-- Every state change of an attempt, for operators.
create table upstream_job_events (
  id bigserial primary key,
  upstream_job_id uuid not null references upstream_jobs (id) on delete cascade,
  state text not null,
  detail text,
  at timestamptz not null default now()
);
create index upstream_job_events_job on upstream_job_events (upstream_job_id, id);
