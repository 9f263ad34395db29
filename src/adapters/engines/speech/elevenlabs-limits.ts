/**
 * Characters one ElevenLabs text-to-speech request may carry, by model, as ElevenLabs documents
 * them (elevenlabs.io/docs models: Eleven v3 5,000, Multilingual v2 10,000, Flash and Turbo v2.5
 * 40,000; Flash and Turbo v2 30,000 and the v1 models 10,000 in the 2025 models page). The stored
 * contract, test/contracts/elevenlabs/text-to-speech.json, states the same (a unit test holds them
 * equal). A model not listed is left to the provider to judge.
 */
export const ELEVENLABS_MAX_TEXT_CHARS: Readonly<Record<string, number>> = Object.freeze({
  eleven_multilingual_v2: 10_000,
  eleven_v3: 5_000,
  eleven_flash_v2_5: 40_000,
  eleven_turbo_v2_5: 40_000,
  eleven_flash_v2: 30_000,
  eleven_turbo_v2: 30_000,
  eleven_multilingual_v1: 10_000,
  eleven_monolingual_v1: 10_000,
});
