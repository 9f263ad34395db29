import { z } from 'zod';
import { GENERATION_OPERATIONS, isImageOperation } from '../../../domain/generation-types.ts';
import { defineProvider, pairsVariable, budgetVariable } from '../provider.ts';
import { OPENAI_IMAGE_MODELS, OPENAI_VIDEO_MODELS, SORA_SECONDS, STANDARD_IMAGE_SIZES } from './openai-map.ts';
import { OPENAI_LIFECYCLE } from './openai-lifecycle.ts';

/** OpenAI: GPT images (and Sora videos, retired: a route to them stops the start). */
export const openaiProvider = defineProvider({
  name: 'openai',
  keyVariable: 'OPENAI_API_KEY',
  env: {
    OPENAI_API_KEY: z.string().optional(),
    OPENAI_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
    OPENAI_IMAGE_MODELS: pairsVariable(),
    /** How long one Images call may take: OpenAI goes on after the client leaves, so a cut call is paid and lost. */
    OPENAI_IMAGE_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(600),
    /** How often its jobs may be read, `<requests>/<seconds>[,...]`: OpenAI's limits are per organization and tier, shown on its dashboard: a conservative pace. */
    OPENAI_POLL_BUDGET: budgetVariable('5/1'),
  },
  settings: (e) => ({ pollBudget: e.OPENAI_POLL_BUDGET, apiKey: e.OPENAI_API_KEY!, baseUrl: e.OPENAI_BASE_URL, imageModels: Object.freeze(e.OPENAI_IMAGE_MODELS), imageTimeoutMs: e.OPENAI_IMAGE_TIMEOUT_SECONDS * 1000 }),
  makes: {
    operations: ['ai-video', ...GENERATION_OPERATIONS.filter(isImageOperation)],
    models: [...OPENAI_VIDEO_MODELS, ...OPENAI_IMAGE_MODELS],
    limits: { video_seconds: SORA_SECONDS, standard_image_sizes: STANDARD_IMAGE_SIZES },
  },
  lifecycle: OPENAI_LIFECYCLE,
  create: async (s, shared) => (await import('./openai-engine.ts')).createOpenAiEngine({ ...s, ...shared }),
});
