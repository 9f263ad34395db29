// Apart from the engine so that the provider module can say what sync takes without loading it.

/**
 * The largest file we upload: sync's older API overview gave 20 MB per upload; its current
 * create-with-files page allows 5 GiB to the parser but a plan limit below that (422
 * file_size_exceeds_plan_limit) it does not state, so the lower documented figure stays.
 */
export const SYNC_MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
/** Our lipsync_model to sync's model name. */
export const SYNC_MODELS: Readonly<Record<string, string>> = { 'lipsync-2.0': 'lipsync-2' };
