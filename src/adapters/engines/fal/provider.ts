import { z } from 'zod';
import { defineProvider, pairsVariable, budgetVariable } from '../provider.ts';
import { FAL_MODELS, SEEDANCE_MAX_IMAGES } from './fal-models.ts';
import { FAL_LIFECYCLE } from './fal-lifecycle.ts';

/** fal.ai: every ai-video model of the spec, through its queue API. */
export const falProvider = defineProvider({
  name: 'fal',
  keyVariable: 'FAL_KEY',
  env: {
    FAL_KEY: z.string().optional(),
    FAL_QUEUE_URL: z.string().url().default('https://queue.fal.run'),
    /** fal's Platform API (model search), read by `adforge providers check`; its OpenAPI names this server. */
    FAL_API_URL: z.string().url().default('https://api.fal.ai/v1'),
    FAL_MODEL_ENDPOINTS: pairsVariable(),
    FAL_JWKS_URL: z.string().url().default('https://rest.alpha.fal.ai/.well-known/jwks.json'),
    /** How often its jobs may be read, `<requests>/<seconds>[,...]`: fal publishes no limit on reading a request's status (its limit is concurrency): a conservative pace. */
    FAL_POLL_BUDGET: budgetVariable('10/1'),
  },
  settings: (e) => ({ pollBudget: e.FAL_POLL_BUDGET, apiKey: e.FAL_KEY!, queueUrl: e.FAL_QUEUE_URL, apiUrl: e.FAL_API_URL, jwksUrl: e.FAL_JWKS_URL, endpoints: Object.freeze(e.FAL_MODEL_ENDPOINTS) }),
  makes: { operations: ['ai-video'], models: FAL_MODELS, limits: { seedance_max_images: SEEDANCE_MAX_IMAGES } },
  lifecycle: FAL_LIFECYCLE,
  create: async (s, shared) => (await import('./fal-engine.ts')).createFalEngine({ ...s, ...shared }),
});
