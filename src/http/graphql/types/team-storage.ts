import type { TeamStorageUsage } from '../../../services/storage-usage.ts';
import { builder } from '../builder.ts';

// Floats: a count of bytes outgrows GraphQL's 32-bit Int at 2 GiB (a Float is exact to 2^53).
export const TeamStorageRef = builder.objectRef<TeamStorageUsage>('TeamStorage').implement({
  description: "Bytes the team stores, by kind; the sum is what the tier's storage quota is checked against",
  fields: (t) => ({
    outputs_bytes: t.exposeFloat('outputs_bytes', { description: "Generations' results and voiceovers' audio" }),
    inputs_bytes: t.exposeFloat('inputs_bytes', { description: 'Input copies kept for generations, product and custom avatar images' }),
    uploads_bytes: t.exposeFloat('uploads_bytes', { description: 'Uploads (ready ones)' }),
    total_bytes: t.exposeFloat('total_bytes'),
    quota_bytes: t.exposeFloat('quota_bytes', {
      nullable: true,
      description: "The tier's storage quota (STORAGE_QUOTA_TIERS); past it uploads and new generations are refused (forbidden). null = none",
    }),
  }),
});
