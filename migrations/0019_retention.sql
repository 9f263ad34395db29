-- Retention (issue 28 item 3). An owner may keep the team's generated files for fewer days than the
-- operator's RETENTION_DAYS (null: the operator's, or forever when that is unset too).
alter table teams add column retention_days integer check (retention_days between 1 and 36500);

-- When the retention job removed the generation's stored files (its results and the input copies
-- kept for it alone). The row stays, with its details; result_keys is emptied at the same moment.
alter table generations add column files_expired_at timestamptz;

-- What the daily job looks for, per team and oldest first: ended generations whose files are still
-- kept. A generation leaves this index once its files are gone, so each run reads only what is new.
create index generations_files_kept on generations (team_id, created_at) where status <> 'processing' and files_expired_at is null;

-- Our copies of scraped ad media are kept AD_MEDIA_RETENTION_DAYS after the scrape that made them
-- (a later scrape of the page copies them again).
alter table ad_library_ads add column media_expired_at timestamptz;
alter table ad_library_brands add column profile_picture_expired_at timestamptz;
create index ad_library_ads_media_kept on ad_library_ads (updated_at) where media_expired_at is null;
