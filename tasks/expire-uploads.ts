import { defineCron } from './define.ts';

/** Uploads past their time (UPLOAD_TTL_HOURS) that nothing uses any more go, with their files. */
export const expireUploadsCron = defineCron({
  name: 'expire_uploads',
  schedule: '47 * * * *',
  handler: async (ctx, helpers) => {
    const deleted = await ctx.uploads.deleteExpired();
    if (deleted) helpers.logger.info(`${deleted} expired uploads deleted`);
  },
});
