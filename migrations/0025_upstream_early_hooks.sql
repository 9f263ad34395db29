-- A provider's callback that arrives before its submit's answer is recorded (the provider answered
-- the create and called back at once; ours was still on its way to the database). `job_ref` is the
-- provider's job id (a signed callback names only that) or our attempt id (a callback on a URL
-- holding the attempt's token). The submit takes the row once it has recorded the job, and looks
-- at once instead of waiting for the safety-net poll. Rows no submit claims are removed after an hour.
create table upstream_early_hooks (
  provider text not null,
  job_ref text not null,
  received_at timestamptz not null default now(),
  primary key (provider, job_ref)
);
create index upstream_early_hooks_received_at on upstream_early_hooks (received_at);
