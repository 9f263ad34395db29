import { z } from 'zod';
import { defineProvider, budgetVariable } from '../provider.ts';
import { SYNC_MAX_UPLOAD_BYTES, SYNC_MODELS } from './sync-limits.ts';
import { SYNC_LIFECYCLE } from './sync-lifecycle.ts';

/** sync.so: talking avatars lip-synced by lipsync-2.0. */
export const syncProvider = defineProvider({
  name: 'sync',
  keyVariable: 'SYNC_API_KEY',
  env: {
    SYNC_API_KEY: z.string().optional(),
    SYNC_API_URL: z.string().url().default('https://api.sync.so'),
    SYNC_WEBHOOK_SECRET: z.string().optional(),
    /** How often its jobs may be read, `<requests>/<seconds>[,...]`: sync.so allows 600 GET /v2/generate/* a minute (per IP, its rate-limits page). */
    SYNC_POLL_BUDGET: budgetVariable('10/1,600/60'),
  },
  settings: (e) => ({ pollBudget: e.SYNC_POLL_BUDGET, apiKey: e.SYNC_API_KEY!, apiUrl: e.SYNC_API_URL, webhookSecret: e.SYNC_WEBHOOK_SECRET }),
  makes: { operations: ['talking-avatar'], models: Object.keys(SYNC_MODELS), limits: { upload_max_bytes: SYNC_MAX_UPLOAD_BYTES } },
  lifecycle: SYNC_LIFECYCLE,
  create: async ({ webhookSecret, ...s }, shared) => (await import('./sync-engine.ts')).createSyncEngine({ ...s, ...(webhookSecret ? { webhookSecret } : {}), ...shared }),
});
