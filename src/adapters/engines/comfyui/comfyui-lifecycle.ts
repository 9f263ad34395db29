import type { LifecycleTable } from '../lifecycle.ts';

/* ComfyUI runs the operator's own model files on the operator's own servers: no provider retires them. */
export const COMFYUI_LIFECYCLE: LifecycleTable = {
  provider: 'comfyui',
  read: '2026-12-07',
  note: "The models are the operator's own files on the operator's own servers, so no provider retires them; `adforge providers check` asks each server for every model file the routed workflows load.",
  entries: [],
};
