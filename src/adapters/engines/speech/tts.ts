import fs from 'node:fs/promises';
import path from 'node:path';
import { EngineError } from '../render-job.ts';
import { withTempDir } from '../local/temp.ts';
import { EspeakError, runEspeak } from './espeak.ts';
import { deadline, encodeMp3, speechFailure, type SpeechAudio } from './mp3.ts';
import { espeakVoiceName, isLanguage, isVariant, LANGUAGES } from './espeak-voices.ts';

/** A few thousand characters: about five minutes of speech, made in a few seconds. */
export const MAX_TEXT_CHARS = 5000;
const DEFAULT_TIMEOUT_MS = 2 * 60_000;
/** eSpeak's own default rate, which `speed: 1` means. */
const BASE_WPM = 175;

export interface SpeechVoice {
  /** A key of LANGUAGES (voices.ts), e.g. `en-us`, `fr-fr`, `nb`. */
  language: string;
  /** An id from VARIANTS (voices.ts), e.g. `f3` or `m3`; default: the language's own (male) voice. */
  variant?: string;
  /** 0-100, 50 (the default) being the voice's own pitch. */
  pitch?: number;
  /** Rate as a multiple of a normal 175 words per minute, 0.5-2; default 1. */
  speed?: number;
}

export interface SynthesizeRequest {
  text: string;
  voice: SpeechVoice;
  signal?: AbortSignal;
  /** The whole call's time limit (synthesis and encoding); default 2 minutes. */
  timeoutMs?: number;
  /** Where the temp dir goes (default os.tmpdir()). */
  tmpRoot?: string;
}

const invalid = (message: string) => new EngineError(message, { transient: false });

/** Control characters other than tab and newlines say nothing and could upset the synthesizer. */
function speakableText(text: string): string {
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, ' ').trim();
  if (!clean) throw invalid('there is no text to speak');
  if (clean.length > MAX_TEXT_CHARS) throw invalid(`the text is longer than ${MAX_TEXT_CHARS} characters`);
  return clean;
}

function espeakVoice(voice: SpeechVoice): { name: string; pitch: number; wpm: number } {
  const { language, variant, pitch = 50, speed = 1 } = voice;
  if (!isLanguage(language)) throw invalid(`there is no voice for the language ${JSON.stringify(language)}`);
  if (variant !== undefined && !isVariant(variant)) throw invalid(`there is no voice variant ${JSON.stringify(variant)}`);
  if (!Number.isFinite(pitch) || pitch < 0 || pitch > 100) throw invalid('the voice pitch must be between 0 and 100');
  if (!Number.isFinite(speed) || speed < 0.5 || speed > 2) throw invalid('the voice speed must be between 0.5 and 2');
  return {
    name: espeakVoiceName(language, variant),
    pitch: Math.min(99, Math.round(pitch)), // eSpeak's scale stops at 99
    wpm: Math.round(BASE_WPM * speed),
  };
}

/** Text to speech with eSpeak NG (in a child process), encoded as a 24 kHz mono MP3. */
export async function synthesize(req: SynthesizeRequest): Promise<SpeechAudio> {
  const text = speakableText(req.text);
  const voice = espeakVoice(req.voice);
  const run = deadline(req.signal, req.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  try {
    const wav = await runEspeak({ text, voice: voice.name, pitch: voice.pitch, wpm: voice.wpm }, run.signal);
    return await withTempDir(req.tmpRoot, async (dir) => {
      const input = path.join(dir, 'speech.wav');
      await fs.writeFile(input, wav);
      // eSpeak speaks at 22050 Hz; 24 kHz is the nearest rate MP3 has (no content is lost).
      return encodeMp3(dir, { path: input, demuxer: 'wav' }, 'aresample=24000', 24_000, run.signal);
    });
  } catch (err) {
    if (err instanceof EspeakError && err.reason === 'unknown-voice') {
      throw invalid(`there is no voice for ${LANGUAGES[req.voice.language] ?? req.voice.language}`);
    }
    throw speechFailure(err, req.signal, run.timedOut(), 'the speech could not be made');
  }
}
