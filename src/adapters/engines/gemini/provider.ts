import { z } from 'zod';
import { GENERATION_OPERATIONS, isImageOperation } from '../../../domain/generation-types.ts';
import { defineProvider, pairsVariable, budgetVariable } from '../provider.ts';
import { GEMINI_DEFAULT_IMAGE_MODELS, GEMINI_VIDEO_MODELS, VEO_DURATIONS, VEO_MAX_REFERENCES, VEO_RATIOS } from './gemini-map.ts';
import { GEMINI_LIFECYCLE } from './gemini-lifecycle.ts';

/** Google's Gemini API: Veo videos and Gemini images. */
export const geminiProvider = defineProvider({
  name: 'gemini',
  keyVariable: 'GEMINI_API_KEY',
  env: {
    GEMINI_API_KEY: z.string().optional(),
    GEMINI_API_URL: z.string().url().default('https://generativelanguage.googleapis.com/v1beta'),
    GEMINI_IMAGE_MODELS: pairsVariable(),
    /** How long we wait for one image call (one image per call); Google is told a deadline up to 30 s shorter. */
    GEMINI_IMAGE_TIMEOUT_SECONDS: z.coerce.number().int().min(2).max(3600).default(330),
    /** How often its jobs may be read, `<requests>/<seconds>[,...]`: Google publishes no limit for operations.get (limits are per project, by tier): a conservative pace. */
    GEMINI_POLL_BUDGET: budgetVariable('1/1'),
  },
  settings: (e) => ({ pollBudget: e.GEMINI_POLL_BUDGET, apiKey: e.GEMINI_API_KEY!, apiUrl: e.GEMINI_API_URL, imageModels: Object.freeze(e.GEMINI_IMAGE_MODELS), imageTimeoutMs: e.GEMINI_IMAGE_TIMEOUT_SECONDS * 1000 }),
  makes: {
    operations: ['ai-video', ...GENERATION_OPERATIONS.filter(isImageOperation)],
    models: [...Object.keys(GEMINI_VIDEO_MODELS), ...Object.keys(GEMINI_DEFAULT_IMAGE_MODELS)],
    limits: { video_aspect_ratios: VEO_RATIOS, video_seconds: VEO_DURATIONS, video_max_references: VEO_MAX_REFERENCES },
  },
  lifecycle: GEMINI_LIFECYCLE,
  create: async (s, shared) => (await import('./gemini-engine.ts')).createGeminiEngine({ ...s, ...shared }),
});
