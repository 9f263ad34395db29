import type { Readable } from 'node:stream';
import type { GenerationKind, GenerationOperation } from '../../domain/generation-types.ts';

/** An input image the runner has already read (from storage or a user URL): images are decoded whole, and bounded. */
export interface EngineAsset {
  bytes: Buffer;
  mime: string;
}

/**
 * An input video or sound, of any size: opened as a stream when the render needs it and written
 * once into the job's temp dir (sniffed from its first bytes), never held whole in memory. An
 * engine input file (UpstreamFile) is one.
 */
export interface EngineMedia {
  open(signal: AbortSignal): Promise<{ stream: Readable; mime: string }>;
}

export interface EngineBrand {
  name: string;
  colorPrimary: string | null;
  colorAccent: string | null;
  logo: EngineAsset | null;
  reference: EngineAsset | null;
}

/**
 * Everything the local renderer needs to draw one generation (local/job.ts makes it from the
 * inputs every engine gets). `params` is the validated request with
 * its defaults applied (the same object stored on the generation); assets are resolved bytes.
 */
export interface EngineJob {
  generationId: string;
  operation: GenerationOperation;
  kind: GenerationKind;
  params: Record<string, unknown>;
  /** Seconds of video to produce (video kinds). */
  durationSeconds?: number;
  /** Output frame size in pixels. */
  width: number;
  height: number;
  /** Image generations: how many files to produce. */
  quantity: number;
  prompt: string;
  /** talking-avatar: the text spoken and captioned. */
  script?: string;
  /** talking-avatar / swap-avatar: the face. */
  avatar?: EngineAsset;
  /** talking-avatar from an existing voiceover: its audio (WAV/MP3). */
  voiceAudio?: EngineMedia;
  /** talking-avatar from script + voice_id: how the local engine speaks the catalogue voice. */
  voice?: { language: string; variant?: string; pitch?: number; speed?: number };
  /** swap-avatar, localize, video edit: the source video. */
  inputVideo?: EngineMedia;
  referenceImages: EngineAsset[];
  productImages: EngineAsset[];
  brand?: EngineBrand;
  /** Caption template (video edit) or style template (product shots) as stored in the catalogue. */
  template?: Record<string, unknown>;
}

/** A file the local renderer made, on this machine's disk. */
export interface EngineFile {
  path: string;
  mime: string;
  ext: string;
}

/** The files of one render, all in `dir`, a temp dir of their own that whoever gets them removes once done with them. */
export interface EngineResult {
  files: EngineFile[];
  dir: string;
}

/**
 * `transient`: worth another try (a timeout, a 5xx, a rate limit); otherwise the generation fails
 * at once. `message` is shown to the user as the generation's `error`, so it must not leak internals.
 */
export class EngineError extends Error {
  readonly transient: boolean;
  constructor(message: string, opts: { transient: boolean; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.name = 'EngineError';
    this.transient = opts.transient;
  }
}
