import { createElevenLabsSpeechEngine } from './elevenlabs.ts';
import { createLocalSpeechEngine, type SpeechEngine } from './engine.ts';

export interface SpeechEngineOptions {
  /** The local engine's work (download excluded) past this fails it. */
  timeoutMs: number;
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on each call to the provider (which otherwise waits as its SDK does). */
  callTimeoutCapMs?: number | undefined;
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
    ...(opts.callTimeoutCapMs ? { callTimeoutCapMs: opts.callTimeoutCapMs } : {}),
    allowPrivate: opts.allowPrivate,
  });
}
