import { defineCron } from './define.ts';

/**
 * Once a day: the stored files of generations older than their team's retention (RETENTION_DAYS, or
 * the owner's shorter setting) and our copies of scraped ad media older than AD_MEDIA_RETENTION_DAYS.
 */
export const expireStoredFilesCron = defineCron({
  name: 'expire_stored_files',
  schedule: '41 3 * * *',
  handler: async (ctx, helpers) => {
    const run = await ctx.retention.run();
    if (run.generations || run.ad_media) helpers.logger.info(`retention removed the files of ${run.generations} generations and ${run.ad_media} scraped ads or brands (${run.files} files)`);
  },
});
