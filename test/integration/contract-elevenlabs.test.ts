import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startElevenLabsFake, type ElevenLabsFake } from '../support/elevenlabs-fake.ts';
import { wavSeconds } from '../support/wav.ts';

/*
 * The ElevenLabs fake holds requests to test/contracts/elevenlabs/: a request as the contract has
 * it is answered; the same request with one field misnamed is refused the way ElevenLabs refuses
 * it (422, FastAPI's {detail: [{loc, msg, type}]}), the field named in `loc`.
 */

const KEY = 'xi-contract-key-1234';
const VOICE = 'EXAVITQu4vr4xnSDxMaL';
let fake: ElevenLabsFake;

beforeAll(async () => {
  fake = await startElevenLabsFake({ apiKey: KEY, voices: [VOICE] });
});
afterAll(() => fake.close());

const tts = (body: unknown, query = 'output_format=mp3_44100_128') =>
  fetch(`${fake.baseUrl}/v1/text-to-speech/${VOICE}?${query}`, { method: 'POST', headers: { 'xi-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const sts = (parts: Record<string, string | Blob>) => {
  const form = new FormData();
  for (const [name, value] of Object.entries(parts)) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, value, 'voice.wav');
  }
  return fetch(`${fake.baseUrl}/v1/speech-to-speech/${VOICE}?output_format=mp3_44100_128`, { method: 'POST', headers: { 'xi-api-key': KEY }, body: form });
};
const get = (path: string) => fetch(`${fake.baseUrl}${path}`, { headers: { 'xi-api-key': KEY } });

async function refusedAt(res: Response, loc: Array<string | number>) {
  expect(res.status).toBe(422);
  const body = (await res.json()) as { detail: Array<{ loc: unknown[]; msg: string; type: string }> };
  expect(body.detail.map((d) => d.loc)).toContainEqual(loc);
}

const valid = { text: 'Hello.', model_id: 'eleven_multilingual_v2', voice_settings: { stability: 0.5, similarity_boost: 0.75 } };

describe('ElevenLabs fake holds requests to the contract', () => {
  it('text to speech: the documented request is answered with audio', async () => {
    const res = await tts(valid);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
  });

  it('text to speech: one misnamed field (model for model_id) is refused, naming it', async () => {
    await refusedAt(await tts({ text: 'Hello.', model: 'eleven_multilingual_v2' }), ['body', 'model']);
  });

  it('text to speech: a misnamed voice setting, a mistyped one, and an unknown output format are refused, each named', async () => {
    await refusedAt(await tts({ ...valid, voice_settings: { stabilty: 0.5 } }), ['body', 'voice_settings', 'stabilty']);
    await refusedAt(await tts({ ...valid, voice_settings: { stability: 'high' } }), ['body', 'voice_settings', 'stability']);
    await refusedAt(await tts(valid, 'output_format=mp3_44100_999'), ['query', 'output_format']);
    await refusedAt(await tts({ model_id: 'eleven_multilingual_v2' }), ['body', 'text']);
  });

  it("text to speech: a text longer than its model takes is ElevenLabs' 400 max_character_limit_exceeded", async () => {
    const res = await tts({ text: 'a'.repeat(5_001), model_id: 'eleven_v3' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      detail: { status: 'max_character_limit_exceeded', message: "This request's text has 5001 characters and exceeds the character limit of 5000 characters." },
    });
  });

  it('speech to speech: the documented parts are answered; one misnamed part (voiceSettings) is refused, naming it', async () => {
    const audio = new Blob([new Uint8Array(wavSeconds(0.5))], { type: 'audio/wav' });
    expect((await sts({ audio, model_id: 'eleven_multilingual_sts_v2', voice_settings: '{"stability":0.5}' })).status).toBe(200);
    await refusedAt(await sts({ audio, model_id: 'eleven_multilingual_sts_v2', voiceSettings: '{"stability":0.5}' }), ['body', 'voiceSettings']);
    await refusedAt(await sts({ model_id: 'eleven_multilingual_sts_v2' }), ['body', 'audio']);
  });

  it('the free reads: models, a voice and the subscription are answered; a parameter they do not take is refused', async () => {
    for (const path of ['/v1/models', `/v1/voices/${VOICE}`, '/v1/user/subscription']) expect((await get(path)).status).toBe(200);
    await refusedAt(await get('/v1/models?page_size=10'), ['query', 'page_size']);
  });
});
