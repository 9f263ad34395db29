import { defineCron } from './define.ts';

/** A generation past its deadline fails and is refunded, whatever happened to its job. */
export const sweepGenerationsCron = defineCron({
  name: 'sweep_generations',
  schedule: '* * * * *',
  handler: async (ctx, helpers) => {
    for (const id of await ctx.maintenance.sweepOverdueGenerations()) helpers.logger.warn(`generation ${id} timed out and was refunded`);
  },
});
