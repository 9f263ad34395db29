import { defineCron } from './define.ts';

/** Rate-limit windows are a minute long; an hour of history is plenty. */
export const purgeRateLimitHitsCron = defineCron({
  name: 'purge_rate_limit_hits',
  schedule: '23 * * * *',
  handler: async (ctx) => {
    await ctx.maintenance.purgeRateLimitHits();
  },
});
