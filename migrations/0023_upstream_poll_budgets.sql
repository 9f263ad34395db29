-- One row per provider: the shared poll budget of issue 31 (every worker process reads and writes
-- the same row). `next_at` orders the waiting looks: a look takes the slot at
-- greatest(next_at, now(), paused_until) and moves next_at on by the budget's spacing, then waits
-- for that slot (in the queue, not holding a worker slot). `last_read_at` is the gate every read
-- passes in one statement: a read goes only when the previous one of the provider is at least the
-- spacing ago, so a worker that runs queued looks late cannot send them in a burst.
-- `paused_until` is set from a 429 (Retry-After, a body's retryAfter): no read goes before it.
create table upstream_poll_budgets (
  provider text primary key,
  next_at timestamptz not null default now(),
  last_read_at timestamptz not null default '-infinity',
  paused_until timestamptz not null default '-infinity'
);
