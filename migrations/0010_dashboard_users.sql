-- The dashboard's people: users of a team, their sessions and one-time sign-in links (DESIGN decision 17).

create table users (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  -- Stored lower-cased: one person, one address, whatever the case they type.
  email text not null unique check (email = lower(email) and length(email) between 3 and 254),
  role text not null check (role in ('owner', 'member')),
  -- argon2id (PHC string); null until the user first follows a link and chooses one.
  password_hash text,
  created_at timestamptz not null default now()
);
create index users_team on users (team_id, created_at);

-- Only a digest of the cookie's value is kept: a copy of this table opens no session.
create table sessions (
  id_digest bytea primary key,
  user_id uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index sessions_user on sessions (user_id);

create table sign_in_links (
  token_digest bytea primary key,
  user_id uuid not null references users (id) on delete cascade,
  purpose text not null check (purpose in ('sign_in', 'invite')),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index sign_in_links_user on sign_in_links (user_id);

-- Failed sign-ins, counted per address and per client address over a window.
create table sign_in_failures (
  id bigint generated always as identity primary key,
  email text not null,
  ip text not null,
  at timestamptz not null default now()
);
create index sign_in_failures_email on sign_in_failures (email, at);
create index sign_in_failures_ip on sign_in_failures (ip, at);

alter table api_keys
  add column name text not null default '' check (length(name) <= 100),
  add column last_used_at timestamptz,
  add column created_by uuid references users (id) on delete set null;
