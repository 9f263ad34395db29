import type { LifecycleEntry, LifecycleTable } from '../lifecycle.ts';

/*
 * fal's endpoints adforge sends work to (FAL_DEFAULT_ENDPOINTS), and their lifecycle. fal keeps no
 * deprecations page; its official client lists the endpoints it serves, generated from fal's own
 * OpenAPI documents, and `adforge providers check` asks fal's model search for each routed one.
 */
const CLIENT = 'fal-ai/fal-js libs/client/src/types/endpoints.ts at 381105e (2026-08-02)';
const SORA = 'fal-ai/fal-js libs/client/src/types/endpoints.ts: listed at 9830f25 (2026-04-07), gone at 381105e (2026-08-02)';
const SORA_NOTE =
  "fal's client dropped every Sora 2 endpoint on 2026-08-02, and OpenAI shut the Sora 2 models down on 2026-09-24 (its sora-2 model page). fal's own pages for these endpoints, in copies that carry no date, still describe them.";

const live = (serves: string, ids: readonly string[]): LifecycleEntry[] => ids.map((id) => ({ id, serves: [serves], status: 'live', date: '2026-08-02', source: CLIENT }));
const o3 = (tier: string) => ['text-to-video', 'image-to-video', 'reference-to-video'].map((kind) => `fal-ai/kling-video/o3/${tier}/${kind}`);

export const FAL_LIFECYCLE: LifecycleTable = {
  provider: 'fal',
  read: '2026-12-07',
  entries: [
    ...live('veo-3.1', ['fal-ai/veo3.1', 'fal-ai/veo3.1/image-to-video', 'fal-ai/veo3.1/first-last-frame-to-video']),
    ...live('veo-3.1-fast', ['fal-ai/veo3.1/fast', 'fal-ai/veo3.1/fast/image-to-video', 'fal-ai/veo3.1/fast/first-last-frame-to-video']),
    ...live('kling-2.6', ['fal-ai/kling-video/v2.6/pro/text-to-video', 'fal-ai/kling-video/v2.6/pro/image-to-video']),
    ...live('kling-o3', [...o3('standard'), ...o3('pro'), ...o3('4k')]),
    ...live('seedance-2.0', ['bytedance/seedance-2.0/text-to-video', 'bytedance/seedance-2.0/reference-to-video']),
    ...live('seedance-2.0-fast', ['bytedance/seedance-2.0/fast/text-to-video', 'bytedance/seedance-2.0/fast/reference-to-video']),
    ...live('seedance-2.0-frames', ['bytedance/seedance-2.0/image-to-video']),
    ...live('seedance-2.0-frames-fast', ['bytedance/seedance-2.0/fast/image-to-video']),
    { id: 'fal-ai/sora-2/text-to-video', serves: ['sora-2'], status: 'retired', date: '2026-08-02', source: SORA, note: SORA_NOTE },
    { id: 'fal-ai/sora-2/image-to-video', serves: ['sora-2'], status: 'retired', date: '2026-08-02', source: SORA, note: SORA_NOTE },
    { id: 'fal-ai/sora-2/text-to-video/pro', serves: ['sora-2-pro'], status: 'retired', date: '2026-08-02', source: SORA, note: SORA_NOTE },
    { id: 'fal-ai/sora-2/image-to-video/pro', serves: ['sora-2-pro'], status: 'retired', date: '2026-08-02', source: SORA, note: SORA_NOTE },
  ],
};
