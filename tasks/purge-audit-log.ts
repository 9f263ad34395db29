import { defineCron } from './define.ts';

/** Once a day: audit lines older than AUDIT_RETENTION_DAYS (400 by default). */
export const purgeAuditLogCron = defineCron({
  name: 'purge_audit_log',
  schedule: '53 4 * * *',
  handler: async (ctx, helpers) => {
    const purged = await ctx.maintenance.purgeAuditLog();
    if (purged) helpers.logger.info(`purged ${purged} audit log lines past their retention`);
  },
});
