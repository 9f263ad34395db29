// Apart from the engine so that the provider module can say what Submagic takes without loading it.

/** upload-project: a video "under 2GB", read as 2,000,000,000 bytes (the lower reading of GB); our own cap applies first. */
export const SUBMAGIC_MAX_UPLOAD_BYTES = 2_000_000_000;
