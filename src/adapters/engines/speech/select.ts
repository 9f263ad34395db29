import type { Config } from '../../../config.ts';
import { createElevenLabsSpeechEngine } from './elevenlabs.ts';
import { createLocalSpeechEngine, type SpeechEngine } from './engine.ts';

/** The speech engine SPEECH_ENGINE names: eSpeak/ffmpeg on this machine, or the ElevenLabs API. */
export function createSpeechEngine(config: Pick<Config, 'speech' | 'speechTimeoutSeconds' | 'allowPrivateNetworkUrls'>): SpeechEngine {
  const timeoutMs = config.speechTimeoutSeconds * 1000;
  if (config.speech.engine === 'local') return createLocalSpeechEngine({ timeoutMs });
  const el = config.speech.elevenlabs;
  return createElevenLabsSpeechEngine({
    baseUrl: el.apiUrl,
    apiKey: el.apiKey,
    voiceIds: el.voiceIds,
    defaultModel: el.model,
    stsModel: el.stsModel,
    timeoutMs,
    allowPrivate: config.allowPrivateNetworkUrls,
  });
}
