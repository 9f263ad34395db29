-- Credits a team owner added from the dashboard (OWNER_TOP_UP): who, how many, when. The sum since
-- the team's period started is held to OWNER_TOP_UP_MAX_PER_PERIOD, under the team's row lock.
create table credit_top_ups (
  id bigint generated always as identity primary key,
  team_id uuid not null references teams (id) on delete cascade,
  user_id uuid references users (id) on delete set null,
  credits integer not null check (credits > 0),
  at timestamptz not null default now()
);
create index credit_top_ups_team on credit_top_ups (team_id, at);
