-- Live progress of a generation (issue 30 item 2): how far its engine says it is, 0 to 1 (null
-- while unknown), and its stage in words ("queued at position 3", "running step 12 of 30",
-- "copying the result"). Written by the generation core while the generation is processing, at
-- most a few times a second (progress_at is the last write: an engine's report closer to it than
-- the core's gap is skipped; the core's own stages are always written), and only when something
-- changed; each write NOTIFYs the generation's subscribers in the same statement. A
-- completed generation has progress 1 and no stage; a failed one keeps the last progress and
-- stage it reached. Shown on GraphQL and the dashboard only: the REST answers keep the spec's shapes.
alter table generations
  add column progress real check (progress >= 0 and progress <= 1),
  add column stage text check (length(stage) <= 200),
  add column progress_at timestamptz;
