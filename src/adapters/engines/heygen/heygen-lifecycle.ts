import type { LifecycleTable } from '../lifecycle.ts';
import { HEYGEN_SWAP_TARGET, HEYGEN_TALKING_AVATAR_TARGET } from './heygen-map.ts';

/*
 * HeyGen's API names no model: adforge sends work to a kind of video (an image-driven Avatar IV
 * video, a face swap workflow, a video translation). Their lifecycle is that of the calls, as the
 * stored contracts read them; `adforge providers check` asks HeyGen for each one.
 */
export const HEYGEN_LIFECYCLE: LifecycleTable = {
  provider: 'heygen',
  read: '2026-12-07',
  note: 'Video translation names no model; its languages are checked against the list HeyGen serves by `adforge providers check`.',
  entries: [
    { id: HEYGEN_TALKING_AVATAR_TARGET, serves: ['heygen-avatar4'], status: 'live', date: '2026-11-26', source: 'heygen-com/heygen-cli gen/*.go at 7699a8e (POST /v3/videos, type image); no deprecation found' },
    { id: HEYGEN_SWAP_TARGET, serves: ['swap-avatar'], status: 'live', date: '2026-11-26', source: 'heygen-com/skills-legacy skills/faceswap/SKILL.md at 82a046e (the workflow form, 2026-04); no deprecation found' },
  ],
};
