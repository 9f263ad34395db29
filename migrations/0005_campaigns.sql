-- Bulk CSV campaigns: a named campaign per team and one row per line of the file.

create table campaigns (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  api_key_id uuid references api_keys (id) on delete set null,
  name text not null,
  status text not null default 'draft' check (status in ('draft', 'running', 'submitted')),
  created_at timestamptz not null default now(),
  started_at timestamptz,
  submitted_at timestamptz,
  unique (team_id, name)
);

create table campaign_rows (
  campaign_id uuid not null references campaigns (id) on delete cascade,
  row_number integer not null check (row_number >= 1),
  row_key text,
  type text not null,
  body jsonb not null,
  credits integer not null check (credits >= 0),
  -- pending: waiting to be submitted; submitted: has its generation or voiceover; failed: its create was refused.
  state text not null default 'pending' check (state in ('pending', 'submitted', 'failed')),
  generation_id uuid references generations (id) on delete set null,
  voiceover_id uuid references voiceovers (id) on delete set null,
  error text,
  updated_at timestamptz not null default now(),
  primary key (campaign_id, row_number)
);
create index campaign_rows_pending on campaign_rows (campaign_id, row_number) where state = 'pending';
create index campaign_rows_generation on campaign_rows (generation_id) where generation_id is not null;
