import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { EngineError } from '../../src/adapters/engines/render-job.ts';
import { createElevenLabsSpeechEngine, type ElevenLabsEngineOptions } from '../../src/adapters/engines/speech/elevenlabs.ts';
import { SpeechSentError } from '../../src/adapters/engines/speech/engine.ts';
import { createElevenLabsProbe, elevenLabsTargets, type ElevenLabsProbeOptions } from '../../src/adapters/engines/speech/elevenlabs-probe.ts';
import { freePort } from '../support/net.ts';
import { STS_SECONDS, TTS_SECONDS, startElevenLabsFake, type ElevenLabsFake, type FakeFailure } from '../support/elevenlabs-fake.ts';
import { wavSeconds } from '../support/wav.ts';

const emma = VOICES.find((v) => v.name === 'Emma')!;
const james = VOICES.find((v) => v.name === 'James')!;
const olivia = VOICES.find((v) => v.name === 'Olivia')!; // left unmapped
const KEY = 'xi-integration-key-5f0c2a9e7b41d3';
const EMMA_PROVIDER = 'EXAVITQu4vr4xnSDxMaL';
const JAMES_PROVIDER = 'pNInz6obpgDQGcFmaJgB';

let fake: ElevenLabsFake;
const signal = () => AbortSignal.timeout(20_000);

const engineFor = (overrides: Partial<ElevenLabsEngineOptions> = {}) =>
  createElevenLabsSpeechEngine({
    baseUrl: fake.baseUrl,
    apiKey: KEY,
    voiceIds: { [emma.id]: EMMA_PROVIDER, [james.id]: JAMES_PROVIDER },
    defaultModel: 'eleven_multilingual_v2',
    stsModel: 'eleven_multilingual_sts_v2',
    timeoutMs: 10_000,
    allowPrivate: true,
    ...overrides,
  });

/** The EngineError a call rejects with (failing the test if it resolves or throws anything else). */
async function engineError(p: Promise<unknown>): Promise<EngineError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(EngineError);
  return e as EngineError;
}

beforeAll(async () => {
  fake = await startElevenLabsFake({ apiKey: KEY, voices: [EMMA_PROVIDER, JAMES_PROVIDER] });
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => fake.reset());

describe('text to speech', () => {
  it('POSTs the documented request: path with the provider voice id, output_format, xi-api-key, JSON {text, model_id}', async () => {
    const audio = await engineFor().textToSpeech({ text: 'Hello there.', voice: emma }, signal());
    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/v1/text-to-speech/${EMMA_PROVIDER}`);
    expect(req.query).toEqual({ output_format: 'mp3_44100_128' });
    expect(req.headers['xi-api-key']).toBe(KEY);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.accept).toBe('audio/mpeg');
    expect(req.headers.authorization).toBeUndefined();
    // The default model, and no voice_settings at all when none were given (the API refuses {}).
    expect(req.json).toEqual({ text: 'Hello there.', model_id: 'eleven_multilingual_v2' });
    expect(audio.mime).toBe('audio/mpeg');
    expect(audio.bytes.equals(fake.audio.tts)).toBe(true);
    expect(Math.abs(audio.durationSeconds - TTS_SECONDS)).toBeLessThan(0.1);
  });

  it('forwards the model and the two voice settings, nothing else', async () => {
    await engineFor().textToSpeech(
      { text: 'Settings.', voice: james, model: 'eleven_turbo_v2_5', settings: { stability: 0.25, similarity_boost: 0.9, ...{ style: 1 } } },
      signal(),
    );
    const req = fake.requests[0]!;
    expect(req.path).toBe(`/v1/text-to-speech/${JAMES_PROVIDER}`);
    expect(req.json).toEqual({ text: 'Settings.', model_id: 'eleven_turbo_v2_5', voice_settings: { stability: 0.25, similarity_boost: 0.9 } });
  });

  it('sends only the settings that were given', async () => {
    await engineFor().textToSpeech({ text: 'Half.', voice: emma, settings: { stability: 0 } }, signal());
    expect(fake.requests[0]!.json).toEqual({ text: 'Half.', model_id: 'eleven_multilingual_v2', voice_settings: { stability: 0 } });
    fake.reset();
    await engineFor().textToSpeech({ text: 'None.', voice: emma, settings: {} }, signal());
    expect(fake.requests[0]!.json).toEqual({ text: 'None.', model_id: 'eleven_multilingual_v2' });
  });

  it("refuses a text longer than its model's documented limit without calling the provider, naming the limit", async () => {
    const text = 'a'.repeat(5_001);
    const e = await engineError(engineFor().textToSpeech({ text, voice: emma, model: 'eleven_v3' }, signal()));
    expect(e.transient).toBe(false);
    expect(e.message).toBe("the voice provider's model eleven_v3 takes at most 5,000 characters a request; this text has 5,001");
    expect(fake.requests).toHaveLength(0);
    // Up to the limit it is sent; a model with no documented limit is left to the provider.
    await engineFor().textToSpeech({ text: text.slice(1), voice: emma, model: 'eleven_v3' }, signal());
    await engineFor().textToSpeech({ text, voice: emma, model: 'eleven_multilingual_v2' }, signal());
    expect(fake.requests.map((r) => r.status)).toEqual([200, 200]);
  });

  it('keeps a path prefix of the base URL and tolerates a trailing slash', async () => {
    await engineFor({ baseUrl: `${fake.baseUrl}/` }).textToSpeech({ text: 'Slash.', voice: emma }, signal());
    expect(fake.requests[0]!.path).toBe(`/v1/text-to-speech/${EMMA_PROVIDER}`);
    fake.reset();
    await engineError(engineFor({ baseUrl: `${fake.baseUrl}/proxy` }).textToSpeech({ text: 'Prefix.', voice: emma }, signal()));
    expect(fake.requests[0]!.path).toBe(`/proxy/v1/text-to-speech/${EMMA_PROVIDER}`);
  });
});

describe('speech to speech', () => {
  const source = wavSeconds(1.5);

  it('POSTs multipart/form-data: the recording as the `audio` file, model_id, voice_settings as a JSON string', async () => {
    const audio = await engineFor().speechToSpeech({ input: source, voice: emma, settings: { stability: 0.3, similarity_boost: 0.8 } }, signal());
    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/v1/speech-to-speech/${EMMA_PROVIDER}`);
    expect(req.query).toEqual({ output_format: 'mp3_44100_128' });
    expect(req.headers['xi-api-key']).toBe(KEY);
    expect(req.headers['content-type']).toMatch(/^multipart\/form-data; boundary=\S+$/);
    expect(Number(req.headers['content-length'])).toBe(req.raw.length);
    expect(req.parts!.map((p) => p.name)).toEqual(['audio', 'model_id', 'voice_settings']);
    const [file, model, settings] = req.parts!;
    expect(Buffer.isBuffer(file!.value) && file!.value.equals(source)).toBe(true);
    expect(file!.filename).toBe('audio.wav');
    expect(file!.contentType).toBe('audio/wav');
    expect(model!.value).toBe('eleven_multilingual_sts_v2');
    expect(model!.filename).toBeUndefined();
    expect(typeof settings!.value).toBe('string');
    expect(JSON.parse(settings!.value as string)).toEqual({ stability: 0.3, similarity_boost: 0.8 });
    expect(audio.bytes.equals(fake.audio.sts)).toBe(true);
    expect(audio.mime).toBe('audio/mpeg');
    expect(Math.abs(audio.durationSeconds - STS_SECONDS)).toBeLessThan(0.1);
  });

  it('leaves voice_settings out when none were given; an unrecognised recording goes as application/octet-stream', async () => {
    const odd = Buffer.concat([Buffer.from([0, 1, 2, 3]), source]);
    await engineFor({ stsModel: 'eleven_english_sts_v2' }).speechToSpeech({ input: odd, voice: james }, signal());
    const req = fake.requests[0]!;
    expect(req.path).toBe(`/v1/speech-to-speech/${JAMES_PROVIDER}`);
    expect(req.parts!.map((p) => [p.name, p.name === 'audio' ? p.contentType : p.value])).toEqual([
      ['audio', 'application/octet-stream'],
      ['model_id', 'eleven_english_sts_v2'],
    ]);
  });
});

describe('voice mapping', () => {
  it('refuses a catalogue voice without a provider voice id, naming it, without calling the provider', async () => {
    for (const call of [
      (e: ReturnType<typeof engineFor>) => e.textToSpeech({ text: 'Hi.', voice: olivia }, signal()),
      (e: ReturnType<typeof engineFor>) => e.speechToSpeech({ input: wavSeconds(1), voice: olivia }, signal()),
    ]) {
      const e = await engineError(call(engineFor()));
      expect(e.transient).toBe(false);
      expect(e.message).toBe(`the voice Olivia (${olivia.id}) is not available from the voice provider`);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('matches the catalogue id whatever its case', async () => {
    await engineFor().textToSpeech({ text: 'Case.', voice: { ...emma, id: emma.id.toUpperCase() } }, signal());
    expect(fake.requests[0]!.path).toBe(`/v1/text-to-speech/${EMMA_PROVIDER}`);
  });
});

describe('failures', () => {
  const cases: [FakeFailure, boolean, RegExp][] = [
    [500, true, /^the voice provider failed \(HTTP 500\)$/],
    [503, true, /^the voice provider failed \(HTTP 503\)$/],
    [429, true, /^the voice provider is rate-limiting requests \(HTTP 429: too_many_concurrent_requests\); try again later$/],
    [401, false, /^the voice provider refused the request \(HTTP 401: invalid_api_key: Invalid API key: \[redacted\]\)$/],
    [404, false, /^the voice provider refused the request \(HTTP 404: voice_not_found: A voice with the voice_id nope was not found\.\)$/],
    [422, false, /^the voice provider refused the request \(HTTP 422: text: Field required\)$/],
    ['not-audio', false, /^the voice provider answered with something that is not MP3 audio$/],
  ];
  for (const [kind, transient, message] of cases) {
    it(`${kind}: ${transient ? 'transient' : 'permanent'}, with a message that never holds the key`, async () => {
      for (const call of ['tts', 'sts'] as const) {
        fake.control.fail = { with: kind, times: 1 };
        const engine = engineFor();
        const e = await engineError(
          call === 'tts' ? engine.textToSpeech({ text: 'Fail.', voice: emma }, signal()) : engine.speechToSpeech({ input: wavSeconds(1), voice: emma }, signal()),
        );
        expect(e.transient).toBe(transient);
        expect(e.message).toMatch(message);
        expect(e.message).not.toContain(KEY);
      }
    });
  }

  it('a wrong key: 401 with the echoed key redacted', async () => {
    const e = await engineError(engineFor({ apiKey: 'xi-wrong-key-99999999' }).textToSpeech({ text: 'Key.', voice: emma }, signal()));
    expect(e.transient).toBe(false);
    expect(e.message).toBe('the voice provider refused the request (HTTP 401: invalid_api_key: Invalid API key: [redacted])');
    expect(fake.requests[0]!.headers['xi-api-key']).toBe('xi-wrong-key-99999999');
  });

  it('an unreachable provider is transient', async () => {
    const port = await freePort();
    const e = await engineError(engineFor({ baseUrl: `http://127.0.0.1:${port}` }).textToSpeech({ text: 'Nobody.', voice: emma }, signal()));
    expect(e.transient).toBe(true);
    expect(e.message).toBe('the voice provider could not be reached');
  });

  it('an answer that does not come in time is not transient: ElevenLabs made and billed the speech, and is not asked again', async () => {
    fake.control.delayMs = 2_000;
    const e = await engineError(engineFor({ timeoutMs: 300 }).textToSpeech({ text: 'Slow.', voice: emma }, signal()));
    expect(e).toBeInstanceOf(SpeechSentError);
    expect((e as SpeechSentError).answered).toBe(false);
    expect(e.transient).toBe(false);
    expect(e.message).toBe('the voice provider did not answer within 0.3 s; it was not asked again, since it bills the speech it makes');
    expect(fake.billed).toHaveLength(1);
  });

  it("each call's limit is capped by UPSTREAM_CALL_TIMEOUT_SECONDS (callTimeoutCapMs)", async () => {
    fake.control.delayMs = 2_000;
    const e = await engineError(engineFor({ callTimeoutCapMs: 300 }).textToSpeech({ text: 'Capped.', voice: emma }, signal()));
    expect(e.message).toBe('the voice provider did not answer within 0.3 s; it was not asked again, since it bills the speech it makes');
  });

  it('audio cut off half-way was made and billed: not transient, not asked again', async () => {
    fake.control.fail = { with: 'cut', times: 1 };
    const e = await engineError(engineFor().textToSpeech({ text: 'Cut.', voice: emma }, signal()));
    expect(e).toBeInstanceOf(SpeechSentError);
    expect((e as SpeechSentError).answered).toBe(false);
    expect(e.message).toBe('the voice provider lost its answer; it was not asked again, since it bills the speech it makes');
    expect(fake.billed).toHaveLength(1);
  });

  it('an answer that is not MP3 was billed all the same: a SpeechSentError that answered', async () => {
    fake.control.fail = { with: 'not-audio', times: 1 };
    const e = await engineError(engineFor().textToSpeech({ text: 'Not audio.', voice: emma }, signal()));
    expect(e).toBeInstanceOf(SpeechSentError);
    expect((e as SpeechSentError).answered).toBe(true);
  });

  it('system_busy made nothing: transient, in the provider\'s word', async () => {
    fake.control.fail = { with: 'system-busy', times: 1 };
    const e = await engineError(engineFor().textToSpeech({ text: 'Busy.', voice: emma }, signal()));
    expect(e.transient).toBe(true);
    expect(e.message).toBe('the voice provider is rate-limiting requests (HTTP 429: system_busy); try again later');
    expect(fake.billed).toHaveLength(0);
  });

  it("past the plan's concurrency a request waits in ElevenLabs' queue; one more is refused 429 too_many_concurrent_requests", async () => {
    fake.control.concurrency = 1;
    fake.control.queue = 1;
    fake.control.delayMs = 300;
    const engine = engineFor();
    const said = await Promise.all(['One.', 'Two.', 'Three.'].map((text) => engine.textToSpeech({ text, voice: emma }, signal()).then(() => 'made', (e: EngineError) => e.message)));
    expect(said.filter((x) => x === 'made')).toHaveLength(2);
    expect(said).toContain('the voice provider is rate-limiting requests (HTTP 429: too_many_concurrent_requests); try again later');
    expect(fake.billed).toHaveLength(2);
  });

  it('refuses a provider on a private address unless allowed', async () => {
    const e = await engineError(engineFor({ allowPrivate: false }).textToSpeech({ text: 'Private.', voice: emma }, signal()));
    expect(e.transient).toBe(false);
    expect(e.message).toBe('the voice provider is at a private or reserved address');
    expect(fake.requests).toHaveLength(0);
  });

  it("rejects with the caller's own abort reason before anything is sent", async () => {
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(engineFor().textToSpeech({ text: 'Abort.', voice: emma }, controller.signal)).rejects.toBe(reason);
    expect(fake.requests).toHaveLength(0);
  });

  it('a caller that stops waiting once the request was sent gets a SpeechSentError carrying its reason: the speech may be made', async () => {
    fake.control.delayMs = 2_000;
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 100);
    const e = await engineError(engineFor().textToSpeech({ text: 'Abort.', voice: emma }, controller.signal));
    expect(e).toBeInstanceOf(SpeechSentError);
    expect(e.message).toBe('the voice provider was not waited for any longer; it was not asked again, since it bills the speech it makes');
    expect(fake.billed).toHaveLength(1);
  });
});

describe('the free check (adforge providers check)', () => {
  const probeFor = (overrides: Partial<ElevenLabsProbeOptions> = {}) =>
    createElevenLabsProbe({
      baseUrl: fake.baseUrl,
      apiKey: KEY,
      voiceIds: { [emma.id]: EMMA_PROVIDER, [james.id]: JAMES_PROVIDER },
      defaultModel: 'eleven_multilingual_v2',
      stsModel: 'eleven_multilingual_sts_v2',
      timeoutMs: 5_000,
      allowPrivate: true,
      ...overrides,
    });

  it('ok: the key by the subscription read, the configured models by the model list, each voice by its id; nothing spent', async () => {
    expect(elevenLabsTargets({ voiceIds: { [emma.id]: EMMA_PROVIDER }, defaultModel: 'm', stsModel: 's' })).toEqual(['m', 's', EMMA_PROVIDER]);
    const results = await probeFor().check([], signal());
    expect(results).toEqual([
      { target: 'key', outcome: 'ok', detail: 'the key is accepted; plan creator, 1,234 of 100,000 characters used' },
      { target: 'eleven_multilingual_v2', outcome: 'ok', detail: 'listed; at most 10,000 characters a request' },
      { target: 'eleven_multilingual_sts_v2', outcome: 'ok', detail: 'listed' },
      { target: EMMA_PROVIDER, outcome: 'ok', detail: `voice Voice EXAV (catalogue voice ${emma.id})` },
      { target: JAMES_PROVIDER, outcome: 'ok', detail: `voice Voice pNIn (catalogue voice ${james.id})` },
    ]);
    expect(fake.requests.every((r) => r.method === 'GET')).toBe(true);
    expect(fake.requests.map((r) => r.path).sort()).toEqual(['/v1/models', '/v1/user/subscription', `/v1/voices/${EMMA_PROVIDER}`, `/v1/voices/${JAMES_PROVIDER}`].sort());
  });

  it('key_refused: a wrong key, in the provider words, the key redacted; nothing else is asked', async () => {
    const results = await probeFor({ apiKey: 'xi-wrong-key-77777777' }).check([], signal());
    expect(results).toEqual([{ target: 'key', outcome: 'key_refused', detail: 'HTTP 401: invalid_api_key: Invalid API key: [redacted]' }]);
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/user/subscription']);
  });

  it('model_gone: a model the list no longer has, one that cannot do the job, and a voice that is gone', async () => {
    fake.control.models = fake.control.models.filter((m) => m.model_id !== 'eleven_multilingual_sts_v2');
    const results = await probeFor({ defaultModel: 'eleven_english_sts_v2', voiceIds: { [emma.id]: 'gone0000000000000000' } }).check([], signal());
    expect(results.slice(1)).toEqual([
      { target: 'eleven_english_sts_v2', outcome: 'model_gone', detail: 'GET /v1/models lists eleven_english_sts_v2 with can_do_text_to_speech false' },
      { target: 'eleven_multilingual_sts_v2', outcome: 'model_gone', detail: 'GET /v1/models does not list eleven_multilingual_sts_v2' },
      {
        target: 'gone0000000000000000',
        outcome: 'model_gone',
        detail: `HTTP 404: voice_not_found: A voice with the voice_id gone0000000000000000 was not found. (catalogue voice ${emma.id})`,
      },
    ]);
  });

  it('given targets: only those; a key limited to speech is still accepted, and what it may not read is said', async () => {
    fake.control.deniedReads = new Set(['user', 'models']);
    const results = await probeFor().check(['eleven_v3', EMMA_PROVIDER], signal());
    expect(results).toEqual([
      { target: 'key', outcome: 'ok', detail: expect.stringMatching(/^the key is accepted \(it may not read the subscription: HTTP 401: missing_permissions: .*user_read/) },
      { target: 'eleven_v3', outcome: 'failed', detail: expect.stringMatching(/^cannot check the models: the key may not read it \(HTTP 401: missing_permissions/) },
      { target: EMMA_PROVIDER, outcome: 'ok', detail: `voice Voice EXAV (catalogue voice ${emma.id})` },
    ]);
  });

  it('unreachable: nothing listens at the base URL', async () => {
    const results = await probeFor({ baseUrl: `http://127.0.0.1:${await freePort()}` }).check([], signal());
    expect(results).toEqual([{ target: 'key', outcome: 'unreachable', detail: 'the provider could not be reached' }]);
  });
});
