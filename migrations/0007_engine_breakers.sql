-- One circuit breaker per upstream provider, shared by every worker (and read by `adforge engines`):
-- consecutive submit failures, and until when the provider is skipped once they reach the limit.
create table engine_breakers (
  provider text primary key,
  consecutive_failures integer not null default 0,
  open_until timestamptz,
  last_error text,
  updated_at timestamptz not null default now()
);
