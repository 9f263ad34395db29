import type { EngineJob } from '../render-job.ts';
import type { EngineProgress } from '../engine-contract.ts';

/** A catalogue voice as the speech synthesizer takes it (the job's `voice`). */
export type LocalVoice = NonNullable<EngineJob['voice']>;

/** Text to speech (an MP3), handed in by whoever creates the local engine: the renderers import no speech engine. */
export type Speak = (req: { text: string; voice: LocalVoice; signal: AbortSignal; tmpRoot: string }) => Promise<{ bytes: Buffer }>;

/** What every local renderer gets besides the job. */
export interface RenderContext {
  signal: AbortSignal;
  /** Speaks a talking avatar's script; without it, only a voiceover can be a talking avatar's voice. */
  speak?: Speak | undefined;
  /** Longest one ffmpeg run may take. */
  timeoutMs?: number;
  /** The renderer's steps as it takes them (an image of the batch done), fractions of its own work. */
  progress?: ((p: EngineProgress) => void) | undefined;
}

/** The output video's exact shape. */
export interface Frame {
  width: number;
  height: number;
  duration: number;
}
