import { fileURLToPath } from 'node:url';
import { ChildFailure, describeExit, runChild, ToolError } from '../child-process.ts';

/*
 * Runs eSpeak NG in a child Node process (espeak-child.ts). The synthesizer is GPL: it is never
 * imported into this process, only run beside it, like ffmpeg.
 */

const CHILD = fileURLToPath(new URL('./espeak-child.ts', import.meta.url));
/** Far above what a few thousand characters make (~200 s of 16-bit 22 kHz mono is ~9 MB). */
const WAV_MAX_BYTES = 64 * 1024 * 1024;
const STDERR_TAIL = 4 * 1024;
const UNKNOWN_VOICE = 2;

export interface EspeakRequest {
  text: string;
  /** eSpeak's voice name: a language, optionally "+variant", e.g. `en-us+f3`. */
  voice: string;
  /** eSpeak's pitch scale, 0-99 (50 is the voice's own). */
  pitch: number;
  /** Words per minute (eSpeak's default is 175). */
  wpm: number;
}

export type EspeakFailure = 'unknown-voice' | 'failed';

/** A synthesizer run that did not succeed. */
export class EspeakError extends ToolError<EspeakFailure> {
  override readonly name = 'EspeakError';
}

/**
 * Speaks `req` into a WAV (16-bit mono, 22050 Hz). On abort the child is killed (SIGKILL) and
 * awaited, then this rejects with `signal.reason`, the AbortSignal convention.
 */
export async function runEspeak(req: EspeakRequest, signal?: AbortSignal): Promise<Buffer> {
  let exit;
  try {
    // The same Node binary that runs the server: it strips the child's types as it does ours.
    exit = await runChild(process.execPath, [CHILD], {
      signal,
      stdin: JSON.stringify(req),
      maxStdout: WAV_MAX_BYTES,
      failOnOverflow: true,
      stderrTail: STDERR_TAIL,
    });
  } catch (e) {
    if (e instanceof ChildFailure) {
      const message = e.kind === 'overflow' ? 'espeak-ng produced too much audio' : `espeak-ng ${e.message}`;
      throw new EspeakError(message, 'failed', e.stderr, e.cause);
    }
    throw e;
  }
  if (exit.code === 0) return exit.stdout;
  if (exit.code === UNKNOWN_VOICE) throw new EspeakError(`espeak-ng has no voice ${req.voice}`, 'unknown-voice', exit.stderr);
  throw new EspeakError(`espeak-ng ${describeExit(exit, 2)}`, 'failed', exit.stderr);
}
