-- A key's own token bucket (requests' tokens per minute and the burst), over its tier's; null = the tier's.
alter table api_keys
  add column rate_per_minute integer check (rate_per_minute between 1 and 1000000),
  add column rate_burst integer check (rate_burst between 1 and 1000000),
  add constraint rate_limit_whole check ((rate_per_minute is null) = (rate_burst is null));
