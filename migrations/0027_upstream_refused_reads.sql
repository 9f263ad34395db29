-- Reads of a job the provider refused in a row (a 4xx, a redirect, an answer too large or not
-- understood): a read is asked again, and only a run of them fails the generation. One refused
-- read says nothing certain of a job the provider may have made, and billed.
alter table upstream_jobs add column refused_reads integer not null default 0;
