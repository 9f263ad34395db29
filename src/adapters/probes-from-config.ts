import type { Config } from '../config.ts';
import { createMetaAdSourceProbe } from './ad-library-source/meta-probe.ts';
import { createElevenLabsProbe } from './engines/speech/elevenlabs-probe.ts';
import type { ProviderProbe } from './provider-check.ts';

/**
 * The providers outside ENGINE_ROUTES this configuration uses: ElevenLabs when it speaks, the ad
 * library source when it has a key (without one the source is not set up, so nothing is asked).
 */
export function buildProbes(config: Readonly<Config>): ProviderProbe[] {
  const probes: ProviderProbe[] = [];
  const el = config.speech.elevenlabs;
  if (config.speech.engine === 'elevenlabs' && el) {
    probes.push(
      createElevenLabsProbe({ baseUrl: el.apiUrl, apiKey: el.apiKey, voiceIds: el.voiceIds, defaultModel: el.model, stsModel: el.stsModel, timeoutMs: config.speechTimeoutSeconds * 1000, allowPrivate: config.allowPrivateNetworkUrls }),
    );
  }
  if (config.adLibrary.sourceToken) {
    probes.push(createMetaAdSourceProbe({ baseUrl: config.adLibrary.sourceUrl, accessToken: config.adLibrary.sourceToken, allowPrivate: config.allowPrivateNetworkUrls }));
  }
  return probes;
}
