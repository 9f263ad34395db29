-- The outputs a generation's engine made and we stored while it makes the rest (Gemini makes one
-- image per call, up to eight calls in a row): each is recorded as soon as it is stored, so a failed
-- call, a retry or a worker that took over makes only what is missing, and nothing made is lost.
-- The completion lists them first, in order, and removes their rows; a failed generation deletes
-- their files. `position` is the output's place in the generation's results (0 first).
create table kept_outputs (
  generation_id uuid not null references generations (id) on delete cascade,
  position integer not null check (position >= 0),
  key text not null,
  bytes bigint not null check (bytes >= 0),
  -- The attempt that made it (for operators); its row may go before this one.
  upstream_job_id uuid references upstream_jobs (id) on delete set null,
  created_at timestamptz not null default now(),
  primary key (generation_id, position)
);
