-- The API keys' token buckets, shared by every API node (RATE_LIMIT_STORE=postgres, the default),
-- so a key's limit holds however many nodes serve it. Unlogged: a counter rewritten at every
-- request needs no WAL; after a crash the table is empty and every bucket starts full, as an idle
-- one would be. full_at_ms: when the bucket is full again, after which its row says nothing.
create unlogged table rate_buckets (
  bucket text primary key,
  tokens double precision not null,
  at_ms double precision not null,
  allowed boolean not null,
  full_at_ms double precision not null
);
create index rate_buckets_full_at on rate_buckets (full_at_ms);
