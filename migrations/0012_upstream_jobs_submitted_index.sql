-- The jobs a provider holds now: counted at every poll of a provider with a request budget
-- (Submagic), and looked up by the provider's own id when its webhook arrives.
create index upstream_jobs_submitted_by_provider on upstream_jobs (provider, provider_job_id) where state = 'submitted';
