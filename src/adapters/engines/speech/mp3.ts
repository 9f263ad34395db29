import fs from 'node:fs/promises';
import path from 'node:path';
import { EngineError } from '../render-job.ts';
import { FfmpegError, inputArgs, probeMedia, runFfmpeg, type MediaFile } from '../ffmpeg.ts';

/** What text-to-speech and speech-to-speech both return: an MP3 any browser plays. */
export interface SpeechAudio {
  bytes: Buffer;
  mime: 'audio/mpeg';
  /** Measured on the encoded MP3 with ffprobe, not computed. */
  durationSeconds: number;
}

/** Mono MP3 bitrates: 64 kb/s is plenty for 24 kHz speech, 96 kb/s for 44.1 kHz. */
const BITRATE: Record<number, string> = { 24_000: '64k', 44_100: '96k' };

/**
 * Encodes `input` (a sniffed file in `dir`, opened with its demuxer) through the audio filter graph `filters` to a mono MP3 at
 * `sampleRate`, and measures it. Any video or cover art is dropped, and so is the input's
 * metadata (tags can carry personal data the output has no use for).
 */
export async function encodeMp3(
  dir: string,
  input: MediaFile,
  filters: string,
  sampleRate: 24_000 | 44_100,
  signal: AbortSignal,
): Promise<SpeechAudio> {
  const out = path.join(dir, 'speech.mp3');
  await runFfmpeg(
    [...inputArgs(input), '-vn', '-sn', '-dn', '-map_metadata', '-1', '-af', filters, '-ac', '1', '-ar', String(sampleRate),
      '-c:a', 'libmp3lame', '-b:a', BITRATE[sampleRate] ?? '96k', out],
    { signal, cwd: dir },
  );
  const info = await probeMedia({ path: out, demuxer: 'mp3' }, { signal });
  if (info.audioCodec !== 'mp3' || !info.durationSeconds || info.durationSeconds <= 0) {
    throw new Error(`the encoded speech is not a playable MP3 (${info.audioCodec}, ${info.durationSeconds} s)`);
  }
  return { bytes: await fs.readFile(out), mime: 'audio/mpeg', durationSeconds: info.durationSeconds };
}

/**
 * One signal for a whole run: the caller's, or the run's own time limit. `timedOut()` tells the
 * two apart afterwards, since both make the tools reject with the signal's reason.
 */
export function deadline(signal: AbortSignal | undefined, timeoutMs: number): { signal: AbortSignal; timedOut: () => boolean } {
  const timer = AbortSignal.timeout(timeoutMs);
  return { signal: signal ? AbortSignal.any([signal, timer]) : timer, timedOut: () => timer.aborted && !signal?.aborted };
}

/**
 * Maps a failure to what the caller sees: the caller's own abort is rethrown as is; running out
 * of time is transient (the machine may just be busy, as for video renders); anything else is a
 * permanent EngineError with the user-safe `message` (the cause keeps the details for the logs).
 */
export function speechFailure(err: unknown, caller: AbortSignal | undefined, timedOut: boolean, message: string): unknown {
  if (caller?.aborted) return caller.reason;
  if (err instanceof EngineError) return err;
  if (timedOut || (err instanceof FfmpegError && err.reason === 'timeout')) {
    return new EngineError('making the speech took too long', { transient: true, cause: err });
  }
  return new EngineError(message, { transient: false, cause: err });
}
