import { EngineError } from '../render-job.ts';
import { FfmpegError, probeMedia, writeMedia, type MediaFile, type MediaInfo } from '../ffmpeg.ts';
import { withTempDir } from '../local/temp.ts';
import { deadline, encodeMp3, speechFailure, type SpeechAudio } from './mp3.ts';

/*
 * Speech to speech: the input voice itself transformed with ffmpeg filters. Pitch and formants
 * (the resonances of the vocal tract that make a voice sound large or small, male or female) move
 * separately: `asetrate` moves both, like a tape played faster; the Rubber Band phase vocoder
 * (ffmpeg's `rubberband` filter) then moves the pitch alone and restores the tempo, so the
 * output lasts as long as the input. Shelving EQ then shapes the timbre.
 */

export interface VoiceTarget {
  /** Pitch shift, -12..12 semitones (+12 is an octave up). The tempo is kept. */
  pitchSemitones: number;
  /**
   * Formant shift, -12..12 semitones; default 0, which keeps the speaker's timbre while the pitch
   * moves. Equal to pitchSemitones, the whole voice moves (a chipmunk or giant effect). A male
   * voice sounds female with roughly +4..+7 pitch and +2..+3 formants; the reverse the other way.
   */
  formantSemitones?: number;
  /** -1..1: darker (highs cut) to brighter (highs boosted), a shelf of up to 8 dB above 3 kHz. */
  brightness?: number;
  /** -1..1: thinner (lows cut) to fuller (lows boosted), a shelf of up to 6 dB below 200 Hz. */
  warmth?: number;
}

export interface ConvertVoiceRequest {
  /** Audio in a container we take (MP3, WAV, Ogg, FLAC, M4A; a video's sound track too: media/sniff.ts). */
  input: Buffer;
  target: VoiceTarget;
  signal?: AbortSignal;
  /** The whole call's time limit; default 5 minutes. */
  timeoutMs?: number;
  tmpRoot?: string;
}

/** Work (and output) rate: the input's quality is kept for ordinary recordings. */
const RATE = 44_100;
const MAX_INPUT_SECONDS = 30 * 60;
const DEFAULT_TIMEOUT_MS = 5 * 60_000;

const invalid = (message: string) => new EngineError(message, { transient: false });
const notAudio = (cause?: unknown) => new EngineError('the input is not audio', { transient: false, cause });

function inRange(name: string, value: number | undefined, limit: number): number {
  if (value === undefined) return 0;
  if (!Number.isFinite(value) || Math.abs(value) > limit) throw invalid(`${name} must be between -${limit} and ${limit}`);
  return value;
}

/**
 * The filter graph for `target`, for an input of `seconds`. Without the rubberband filter (ffmpeg
 * builds without librubberband) the pitch moves with asetrate+atempo, the formants with it.
 */
export function voiceFilters(target: VoiceTarget, seconds: number, rubberband = true): string {
  const pitch = inRange('pitchSemitones', target.pitchSemitones, 12);
  const formant = rubberband ? inRange('formantSemitones', target.formantSemitones, 12) : pitch;
  const brightness = inRange('brightness', target.brightness, 1);
  const warmth = inRange('warmth', target.warmth, 1);
  const ratio = (semitones: number) => 2 ** (semitones / 12);
  // Rubber Band keeps back its last ~0.1 s at the end of the stream: padding with silence and
  // trimming to the input's length afterwards makes the output last exactly as long.
  const filters = [`aresample=${RATE}`, 'aformat=channel_layouts=mono', `apad=pad_len=${RATE / 2}`];
  // Formants (and pitch) first: played faster by `ratio`, then back to the work rate.
  if (formant !== 0) filters.push(`asetrate=${Math.round(RATE * ratio(formant))}`, `aresample=${RATE}`);
  const rest = ratio(pitch - formant);
  const tempo = 1 / ratio(formant); // undoes asetrate's speed-up
  if (rubberband && (pitch !== 0 || formant !== 0)) filters.push(`rubberband=tempo=${tempo}:pitch=${rest}:formant=preserved`);
  else if (formant !== 0) filters.push(`atempo=${tempo}`); // within atempo's 0.5-2: |formant| <= 12
  filters.push(`atrim=end_sample=${Math.round(seconds * RATE)}`);
  if (warmth !== 0) filters.push(`bass=g=${(6 * warmth).toFixed(2)}:f=200`);
  if (brightness !== 0) filters.push(`treble=g=${(8 * brightness).toFixed(2)}:f=3000`);
  // Pitch shifting and boosts can push peaks over full scale: limit rather than clip.
  filters.push('alimiter=limit=0.95:level=false');
  return filters.join(',');
}

/**
 * The input's shape, or 'the input is not audio' when ffprobe finds no sound in it. Bytes in a
 * container we do not take are refused before ffprobe (an UnsupportedMediaError, permanent).
 */
async function probeAudio(input: Buffer | MediaFile, signal: AbortSignal): Promise<MediaInfo & { durationSeconds: number }> {
  let info: MediaInfo;
  try {
    info = await probeMedia(input, { signal, kind: 'audio' });
  } catch (err) {
    if (signal.aborted || !(err instanceof FfmpegError) || err.reason !== 'failed') throw err;
    throw notAudio(err); // ffprobe could not read it at all (text, random bytes...)
  }
  if (!info.audioCodec || !info.durationSeconds || info.durationSeconds <= 0) throw notAudio();
  return { ...info, durationSeconds: info.durationSeconds };
}

/** Seconds of sound in `bytes` (for pricing speech-to-speech by the source's length). */
export async function audioDuration(bytes: Buffer, opts: { signal?: AbortSignal } = {}): Promise<number> {
  try {
    return (await probeAudio(bytes, opts.signal ?? new AbortController().signal)).durationSeconds;
  } catch (err) {
    throw speechFailure(err, opts.signal, false, 'the input audio could not be read');
  }
}

/** Speech to speech: `input` with its voice moved to `target`, as a 44.1 kHz mono MP3 of the same length. */
export async function convertVoice(req: ConvertVoiceRequest): Promise<SpeechAudio> {
  voiceFilters(req.target, 1); // checks the target before any work
  const run = deadline(req.signal, req.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  try {
    return await withTempDir(req.tmpRoot, async (dir) => {
      const input = await writeMedia(dir, 'input', req.input, 'audio');
      const info = await probeAudio(input, run.signal);
      if (info.durationSeconds > MAX_INPUT_SECONDS) throw invalid(`the input is longer than ${MAX_INPUT_SECONDS / 60} minutes`);
      try {
        return await encodeMp3(dir, input, voiceFilters(req.target, info.durationSeconds), RATE, run.signal);
      } catch (err) {
        if (!(err instanceof FfmpegError) || !err.stderr.includes("No such filter: 'rubberband'")) throw err;
        return await encodeMp3(dir, input, voiceFilters(req.target, info.durationSeconds, false), RATE, run.signal);
      }
    });
  } catch (err) {
    throw speechFailure(err, req.signal, run.timedOut(), 'the input audio could not be converted');
  }
}
