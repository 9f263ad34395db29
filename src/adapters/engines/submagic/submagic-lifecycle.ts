import type { LifecycleTable } from '../lifecycle.ts';

/* Submagic's API names no model: a video edit names a caption template, checked against Submagic's template list by `adforge providers check`. */
export const SUBMAGIC_LIFECYCLE: LifecycleTable = {
  provider: 'submagic',
  read: '2026-12-07',
  note: "Submagic's API names no model; each caption template a route uses is checked against its template list by `adforge providers check`.",
  entries: [],
};
