import { createElevenLabsSpeechEngine } from './elevenlabs.ts';
import { createLocalSpeechEngine, type SpeechEngine } from './engine.ts';

export interface SpeechEngineOptions {
  /** A call's engine work (download excluded) past this fails it. */
  timeoutMs: number;
  /** The provider's API may sit on a private address (a test fake, a gateway). */
  allowPrivate: boolean;
  /** ElevenLabs' settings when it makes the speech; absent, eSpeak/ffmpeg on this machine. */
  elevenlabs?: {
    apiUrl: string;
    apiKey: string;
    voiceIds: Readonly<Record<string, string>>;
    model: string;
    stsModel: string;
  } | undefined;
}

/** The speech engine SPEECH_ENGINE names: eSpeak/ffmpeg on this machine, or the ElevenLabs API. */
export function createSpeechEngine(opts: SpeechEngineOptions): SpeechEngine {
  const { timeoutMs, elevenlabs: el } = opts;
  if (!el) return createLocalSpeechEngine({ timeoutMs });
  return createElevenLabsSpeechEngine({
    baseUrl: el.apiUrl,
    apiKey: el.apiKey,
    voiceIds: el.voiceIds,
    defaultModel: el.model,
    stsModel: el.stsModel,
    timeoutMs,
    allowPrivate: opts.allowPrivate,
  });
}
