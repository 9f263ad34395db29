import type { LifecycleTable } from '../lifecycle.ts';

/*
 * The ElevenLabs models adforge's speech engine uses by default (ELEVENLABS_MODEL,
 * ELEVENLABS_STS_MODEL). Speech is not routed by ENGINE_ROUTES: the table is shown in
 * docs/providers.md, and `adforge providers check` asks ElevenLabs' model list for each one.
 */
const MODELS = "ElevenLabs' models page and elevenlabs/elevenlabs-js at 8710089; no deprecation found";

export const ELEVENLABS_LIFECYCLE: LifecycleTable = {
  provider: 'elevenlabs',
  read: '2026-12-07',
  entries: [
    { id: 'eleven_multilingual_v2', serves: [], status: 'live', date: '2026-11-26', source: MODELS },
    { id: 'eleven_multilingual_sts_v2', serves: [], status: 'live', date: '2026-11-26', source: MODELS },
  ],
};
