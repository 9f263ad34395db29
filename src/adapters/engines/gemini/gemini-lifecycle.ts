import type { LifecycleTable } from '../lifecycle.ts';

/*
 * The Gemini API models adforge sends work to (GEMINI_VIDEO_MODELS, GEMINI_DEFAULT_IMAGE_MODELS) and
 * the older ids an operator may still name in GEMINI_IMAGE_MODELS, with their lifecycle as Google's
 * deprecations page and release notes give it. Google calls its table's dates the earliest possible
 * shutdown; a date that has passed is taken as the shutdown.
 */
const DEPRECATIONS = "Google's Gemini API deprecations page";
const VEO = "Google's Gemini API deprecations page, copy of 2026-10-06";
const VEO_NOTE =
  "Google names gemini-omni-1.1-flash as the replacement; it is served by the Interactions API, which adforge's Gemini engine does not speak. Google's release notes of 2026-06-15 made these preview ids the Gemini API's only Veo 3.1 ids.";

export const GEMINI_LIFECYCLE: LifecycleTable = {
  provider: 'gemini',
  read: '2026-12-07',
  mapping: 'GEMINI_IMAGE_MODELS',
  entries: [
    { id: 'veo-3.1-generate-preview', serves: ['veo-3.1'], status: 'retired', date: '2026-10-22', source: VEO, note: VEO_NOTE, successor: 'gemini-omni-1.1-flash' },
    { id: 'veo-3.1-fast-generate-preview', serves: ['veo-3.1-fast'], status: 'retired', date: '2026-10-22', source: VEO, note: VEO_NOTE, successor: 'gemini-omni-1.1-flash' },
    { id: 'veo-3.1-lite-generate-preview', serves: [], status: 'retired', date: '2026-10-22', source: VEO, note: VEO_NOTE, successor: 'gemini-omni-1.1-flash' },
    {
      id: 'gemini-3.1-flash-image',
      serves: ['fast'],
      status: 'deprecated',
      date: '2026-10-06',
      source: "Google's Gemini API release notes of 2026-10-06",
      note: 'No shutdown date announced; Google asks to move to gemini-nano-banana-2.1, which the stored Gemini contract does not know yet (GEMINI_IMAGE_MODELS can name it).',
      successor: 'gemini-nano-banana-2.1',
    },
    { id: 'gemini-3-pro-image', serves: ['pro'], status: 'live', date: '2026-10-08', source: `${DEPRECATIONS} and release notes through 2026-10-08`, note: 'No shutdown date announced.' },
    { id: 'gemini-2.5-flash-image', serves: [], status: 'retired', date: '2026-10-02', source: DEPRECATIONS, successor: 'gemini-3.1-flash-image' },
    { id: 'gemini-3.1-flash-image-preview', serves: [], status: 'retired', date: '2026-06-25', source: `${DEPRECATIONS}; release notes of 2026-05-28`, successor: 'gemini-3.1-flash-image' },
    { id: 'gemini-3-pro-image-preview', serves: [], status: 'retired', date: '2026-06-25', source: `${DEPRECATIONS}; release notes of 2026-05-28`, successor: 'gemini-3-pro-image' },
  ],
};
