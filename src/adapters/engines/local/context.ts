/** What every local renderer gets besides the job. */
export interface RenderContext {
  signal: AbortSignal;
  /** Where temp dirs go (default os.tmpdir()). */
  tmpRoot?: string;
  /** Longest one ffmpeg run may take. */
  timeoutMs?: number;
}

/** The output video's exact shape. */
export interface Frame {
  width: number;
  height: number;
  duration: number;
}
