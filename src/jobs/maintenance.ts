import { defineCron } from './define.ts';

/** A generation past its deadline fails and is refunded, whatever happened to its job. */
export const sweepGenerationsCron = defineCron({
  name: 'sweep_generations',
  schedule: '* * * * *',
  handler: async (ctx, helpers) => {
    for (const id of await ctx.maintenance.sweepOverdueGenerations()) helpers.logger.warn(`generation ${id} timed out and was refunded`);
  },
});

/** Stored responses live 24 hours. */
export const purgeIdempotencyKeysCron = defineCron({
  name: 'purge_idempotency_keys',
  schedule: '17 * * * *',
  handler: async (ctx) => {
    await ctx.maintenance.purgeIdempotencyKeys();
  },
});

/** Rate-limit windows are a minute long; an hour of history is plenty. */
export const purgeRateLimitHitsCron = defineCron({
  name: 'purge_rate_limit_hits',
  schedule: '23 * * * *',
  handler: async (ctx) => {
    await ctx.maintenance.purgeRateLimitHits();
  },
});

/** Expired sessions and links, and failed sign-ins older than their window. */
export const pruneSignInStateCron = defineCron({
  name: 'prune_sign_in_state',
  schedule: '29 * * * *',
  handler: async (ctx) => {
    await ctx.maintenance.pruneSignInState();
  },
});

/** Once a day: audit lines older than AUDIT_RETENTION_DAYS (400 by default). */
export const purgeAuditLogCron = defineCron({
  name: 'purge_audit_log',
  schedule: '53 4 * * *',
  handler: async (ctx, helpers) => {
    const purged = await ctx.maintenance.purgeAuditLog();
    if (purged) helpers.logger.info(`purged ${purged} audit log lines past their retention`);
  },
});

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
