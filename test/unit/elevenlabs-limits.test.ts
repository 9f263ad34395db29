import { describe, expect, it } from 'vitest';
import { ELEVENLABS_OUTPUT_FORMAT } from '../../src/adapters/engines/speech/elevenlabs.ts';
import { ELEVENLABS_MAX_TEXT_CHARS } from '../../src/adapters/engines/speech/elevenlabs-limits.ts';
import { MAX_VOICEOVER_TEXT, textToSpeechInput } from '../../src/domain/voiceover-inputs.ts';
import { contractsOf, requestProblems } from '../support/contract.ts';

/*
 * What ElevenLabs takes, read from its stored contract (test/contracts/elevenlabs/), against what
 * the adapter refuses and what the voiceover schema lets through, so that neither can drift from
 * the provider's published limits unnoticed.
 */

const contracts = contractsOf('elevenlabs');
const tts = contracts['text-to-speech']!;

type Rule = { if: { required?: string[]; properties?: { model_id?: { enum: string[] } }; not?: unknown }; then: { properties: { text: { maxLength: number } } } };
const rules = (tts.request.body as { allOf: Rule[] }).allOf;

/** model -> characters per request, as the contract states them. */
const contractLimits = Object.fromEntries(rules.flatMap((r) => (r.if.properties?.model_id?.enum ?? []).map((m) => [m, r.then.properties.text.maxLength])));
const limitWithoutModel = rules.find((r) => r.if.not)!.then.properties.text.maxLength;

describe('ElevenLabs text limits, from the contract', () => {
  it("the adapter's table of characters per model is the contract's", () => {
    expect(ELEVENLABS_MAX_TEXT_CHARS).toEqual(contractLimits);
  });

  it('a request without model_id is held to the default model (eleven_multilingual_v2)', () => {
    const props = (tts.request.body as { properties: { model_id: { default: string } } }).properties;
    expect(limitWithoutModel).toBe(contractLimits[props.model_id.default]);
  });

  it(`the voiceover schema's ${MAX_VOICEOVER_TEXT} characters fit every documented model`, () => {
    const tight = Object.entries(contractLimits).filter(([, max]) => max < MAX_VOICEOVER_TEXT);
    expect(tight).toEqual([]);
  });

  it('the longest text the voiceover schema accepts passes the contract for the default and the tightest model', () => {
    const text = 'é'.repeat(MAX_VOICEOVER_TEXT);
    expect(textToSpeechInput.safeParse({ text, voice_id: 'v' }).success).toBe(true);
    const headers = { 'xi-api-key': 'k', 'content-type': 'application/json' };
    for (const model_id of ['eleven_multilingual_v2', 'eleven_v3']) {
      expect(requestProblems(tts, { headers, query: { output_format: ELEVENLABS_OUTPUT_FORMAT }, body: { text, model_id } })).toEqual([]);
    }
  });
});

describe('ElevenLabs voice settings and output format, from the contract', () => {
  const headers = { 'xi-api-key': 'k', 'content-type': 'application/json' };

  it('the bounds the voiceover schema allows (0 and 1) are settings the contract takes', () => {
    for (const [stability, similarity_boost] of [
      [0, 1],
      [1, 0],
    ]) {
      expect(textToSpeechInput.safeParse({ text: 't', voice_id: 'v', voice_settings: { stability, similarity_boost } }).success).toBe(true);
      expect(requestProblems(tts, { headers, query: {}, body: { text: 't', model_id: 'eleven_multilingual_v2', voice_settings: { stability, similarity_boost } } })).toEqual([]);
    }
  });

  it(`the adapter's output format (${ELEVENLABS_OUTPUT_FORMAT}) is one both speech calls take`, () => {
    for (const name of ['text-to-speech', 'speech-to-speech']) {
      const q = contracts[name]!.request.query as { properties: { output_format: { enum: string[] } } };
      expect(q.properties.output_format.enum).toContain(ELEVENLABS_OUTPUT_FORMAT);
    }
  });
});
