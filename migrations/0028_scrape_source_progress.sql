-- Where a scrape stands at its paid source, so that a worker stopped part-way goes on instead of
-- paying the source again for pages it had: source_asking while a page of results is asked and its
-- answer not yet kept (its outcome unknown: it may be paid, and is not asked again); source_page,
-- the answer kept until its ads are stored (the brand too, for the first page); source_cursor, the
-- cursor of the next page to ask (with brand_id set and neither of the others, every page was
-- read). ads_count counts the ads stored so far while the scrape runs.
alter table ad_library_scrape_jobs
  add column source_asking boolean not null default false,
  add column source_page jsonb,
  add column source_cursor text;
