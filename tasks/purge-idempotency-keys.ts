import { defineCron } from './define.ts';

/** Stored responses live 24 hours. */
export const purgeIdempotencyKeysCron = defineCron({
  name: 'purge_idempotency_keys',
  schedule: '17 * * * *',
  handler: async (ctx) => {
    await ctx.maintenance.purgeIdempotencyKeys();
  },
});
