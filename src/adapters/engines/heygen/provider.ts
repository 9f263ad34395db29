import { z } from 'zod';
import { defineProvider, pairsVariable, budgetVariable } from '../provider.ts';
import { HEYGEN_ASSET_MAX_BYTES, HEYGEN_OPERATIONS } from './heygen-map.ts';
import { HEYGEN_LIFECYCLE } from './heygen-lifecycle.ts';

/** HeyGen: talking avatars, video translation (localize) and face swaps. */
export const heygenProvider = defineProvider({
  name: 'heygen',
  keyVariable: 'HEYGEN_API_KEY',
  env: {
    HEYGEN_API_KEY: z.string().optional(),
    HEYGEN_API_URL: z.string().url().default('https://api.heygen.com'),
    // HeyGen's language names hold commas ("Chinese (Mandarin, Simplified)"): pairs are split on ';'.
    HEYGEN_LANGUAGES: pairsVariable(';'),
    /** How often its jobs may be read, `<requests>/<seconds>[,...]`: HeyGen publishes no number for reading a video (it answers 429 with Retry-After): a conservative pace. */
    HEYGEN_POLL_BUDGET: budgetVariable('5/1'),
  },
  settings: (e) => ({ pollBudget: e.HEYGEN_POLL_BUDGET, apiKey: e.HEYGEN_API_KEY!, apiUrl: e.HEYGEN_API_URL, languages: Object.freeze(e.HEYGEN_LANGUAGES) }),
  makes: { operations: HEYGEN_OPERATIONS, models: [], limits: { asset_max_bytes: HEYGEN_ASSET_MAX_BYTES } },
  lifecycle: HEYGEN_LIFECYCLE,
  create: async (s, shared) => (await import('./heygen-engine.ts')).createHeyGenEngine({ ...s, ...shared }),
});
