import type { LifecycleTable } from '../lifecycle.ts';

/*
 * The OpenAI models adforge sends work to (OPENAI_DEFAULT_IMAGE_MODELS, the Sora models) and the
 * image models an operator may still name in OPENAI_IMAGE_MODELS, with their lifecycle as OpenAI's
 * deprecations page and its SDK give it. `adforge providers check` also reads each routed model's
 * `shutdown_date` from OpenAI itself.
 */
const DEPRECATIONS = "OpenAI's API deprecations page";
const IMAGES_NOTE = 'Deprecated on 2026-06-02; OpenAI names gpt-image-2.6-sunburst or gpt-image-2.6-flare, which the stored OpenAI contract does not know yet.';
const SORA = "OpenAI's sora-2 model page; openai/openai-node src/resources/videos.ts at 4424b404 (2026-08-13)";
const SORA_NOTE = 'The Sora 2 models and the Videos API shut down together, with no replacement API.';
const LIVE = `${DEPRECATIONS}, entries through 2026-11-05 (not listed); openai/openai-node ImageModel at 7b7d6ca`;

export const OPENAI_LIFECYCLE: LifecycleTable = {
  provider: 'openai',
  read: '2026-12-07',
  mapping: 'OPENAI_IMAGE_MODELS',
  entries: [
    { id: 'gpt-image-2', serves: ['gpt-2', 'gpt-2.5'], status: 'live', date: '2026-11-05', source: LIVE },
    { id: 'gpt-image-2-2026-04-21', serves: [], status: 'live', date: '2026-11-05', source: LIVE },
    { id: 'gpt-image-1.5', serves: [], status: 'retired', date: '2026-12-01', source: DEPRECATIONS, note: IMAGES_NOTE, successor: 'gpt-image-2.6-sunburst' },
    { id: 'gpt-image-1-mini', serves: [], status: 'retired', date: '2026-12-01', source: DEPRECATIONS, note: IMAGES_NOTE, successor: 'gpt-image-2.6-sunburst' },
    { id: 'chatgpt-image-latest', serves: [], status: 'retired', date: '2026-12-01', source: DEPRECATIONS, note: IMAGES_NOTE, successor: 'gpt-image-2.6-sunburst' },
    { id: 'gpt-image-1', serves: [], status: 'retired', date: '2026-10-23', source: `${DEPRECATIONS}, as quoted on 2026-10-15` },
    { id: 'sora-2', serves: ['sora-2'], status: 'retired', date: '2026-09-24', source: SORA, note: SORA_NOTE },
    { id: 'sora-2-pro', serves: ['sora-2-pro'], status: 'retired', date: '2026-09-24', source: SORA, note: SORA_NOTE },
  ],
};
