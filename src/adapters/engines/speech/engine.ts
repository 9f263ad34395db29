import type { CatalogueVoice } from '../../../domain/catalogue/voices.ts';
import { conversionTarget } from '../../../domain/voice-conversion.ts';
import { EngineError } from '../render-job.ts';
import type { SpeechAudio } from './mp3.ts';
import { synthesize } from './tts.ts';
import { convertVoice } from './voice-change.ts';

export interface VoiceSettings {
  stability?: number;
  similarity_boost?: number;
}

export interface TextToSpeechJob {
  text: string;
  voice: CatalogueVoice;
  model?: string;
  settings?: VoiceSettings;
}

export interface SpeechToSpeechJob {
  input: Buffer;
  voice: CatalogueVoice;
  settings?: VoiceSettings;
}

/**
 * A paid provider got the request and may have made, and billed, the speech: asking again could
 * pay for it twice. `answered` false: its answer was lost (a timeout, a reset, an answer cut off),
 * so its outcome is unknown; true: it answered with something that cannot be used.
 */
export class SpeechSentError extends EngineError {
  readonly answered: boolean;
  constructor(message: string, opts: { answered: boolean; cause?: unknown }) {
    super(message, { transient: false, cause: opts.cause });
    this.name = 'SpeechSentError';
    this.answered = opts.answered;
  }
}

/** What makes voiceovers; a failure is an EngineError (its message is shown to the caller). */
export interface SpeechEngine {
  readonly name: string;
  /** A provider that bills each request (ElevenLabs): what it was asked is recorded before it is sent. */
  readonly bills?: boolean;
  textToSpeech(job: TextToSpeechJob, signal: AbortSignal): Promise<SpeechAudio>;
  speechToSpeech(job: SpeechToSpeechJob, signal: AbortSignal): Promise<SpeechAudio>;
}

/**
 * eSpeak NG for text, ffmpeg for voice conversion, both in child processes. `model` and
 * `stability` are upstream-provider knobs with no local counterpart; similarity_boost sets how far
 * speech-to-speech moves the recording toward the chosen voice.
 */
export function createLocalSpeechEngine(opts: { timeoutMs: number }): SpeechEngine {
  return {
    name: 'local',
    textToSpeech(job, signal) {
      const { language, variant, pitch, speed } = job.voice.espeak;
      return synthesize({
        text: job.text,
        voice: { language, pitch, speed, ...(variant ? { variant } : {}) },
        signal,
        timeoutMs: opts.timeoutMs,
      });
    },
    speechToSpeech(job, signal) {
      return convertVoice({
        input: job.input,
        target: conversionTarget(job.voice, job.settings?.similarity_boost ?? 1),
        signal,
        timeoutMs: opts.timeoutMs,
      });
    },
  };
}
