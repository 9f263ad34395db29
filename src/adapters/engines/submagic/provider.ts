import { z } from 'zod';
import { defineProvider, pairsVariable, budgetVariable } from '../provider.ts';
import { SUBMAGIC_MAX_UPLOAD_BYTES } from './submagic-limits.ts';
import { SUBMAGIC_LIFECYCLE } from './submagic-lifecycle.ts';

/** Submagic: captions on a video (video edit), by caption template. */
export const submagicProvider = defineProvider({
  name: 'submagic',
  keyVariable: 'SUBMAGIC_API_KEY',
  env: {
    SUBMAGIC_API_KEY: z.string().optional(),
    SUBMAGIC_API_URL: z.string().url().default('https://api.submagic.co'),
    SUBMAGIC_TEMPLATES: pairsVariable(),
    /** How often one Submagic key may read its projects, `<requests>/<seconds>`: docs.submagic.co get-project gives 100 an hour. */
    SUBMAGIC_POLL_BUDGET: budgetVariable('100/3600'),
  },
  settings: (e) => ({ apiKey: e.SUBMAGIC_API_KEY!, apiUrl: e.SUBMAGIC_API_URL, templates: Object.freeze(e.SUBMAGIC_TEMPLATES), pollBudget: e.SUBMAGIC_POLL_BUDGET }),
  makes: { operations: ['video-edit'], models: [], limits: { upload_max_bytes: SUBMAGIC_MAX_UPLOAD_BYTES } },
  lifecycle: SUBMAGIC_LIFECYCLE,
  create: async (s, shared) => (await import('./submagic-engine.ts')).createSubmagicEngine({ ...s, ...shared }),
});
