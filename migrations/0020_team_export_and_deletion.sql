-- A deleted team keeps its row as a tombstone (deleted_at set) for the operator's accounts: its
-- ledger lines, top-ups and the tombstones of its generations still name it. Everything else of
-- the team is deleted; every service path reads a deleted team as absent.
alter table teams add column deleted_at timestamptz;

-- An owner's export: built by a job into one archive in storage, handed out once as a signed,
-- expiring link, then deleted.
create table team_exports (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  requested_by uuid references users (id) on delete set null,
  status text not null default 'processing' check (status in ('processing', 'completed', 'failed')),
  archive_key text,
  size bigint,
  error text,
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  downloaded_at timestamptz,
  check ((status = 'processing') = (completed_at is null))
);
create index team_exports_team on team_exports (team_id, created_at desc);
