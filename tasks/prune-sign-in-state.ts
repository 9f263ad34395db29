import { defineCron } from './define.ts';

/** Expired sessions and links, and failed sign-ins older than their window. */
export const pruneSignInStateCron = defineCron({
  name: 'prune_sign_in_state',
  schedule: '29 * * * *',
  handler: async (ctx) => {
    await ctx.maintenance.pruneSignInState();
  },
});
