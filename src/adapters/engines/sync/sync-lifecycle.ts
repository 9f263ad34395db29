import type { LifecycleTable } from '../lifecycle.ts';

/* sync.so's lip-sync models adforge sends work to (SYNC_MODELS). `adforge providers check` reads sync's model list, which leaves out deprecated models. */
export const SYNC_LIFECYCLE: LifecycleTable = {
  provider: 'sync',
  read: '2026-12-07',
  entries: [
    { id: 'lipsync-2', serves: ['lipsync-2.0'], status: 'live', date: '2026-11-26', source: "sync's API reference (models, create generation) and synchronicity-labs/sync-typescript-sdk at f0fef21; no deprecation found" },
  ],
};
