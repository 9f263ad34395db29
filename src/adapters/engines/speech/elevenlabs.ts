import { fileTypeFromBuffer } from 'file-type';
import { request } from 'undici';
import type { CatalogueVoice } from '../../../domain/catalogue/voices.ts';
import { neverSent } from '../../net/never-sent.ts';
import { readAtMost } from '../../net/read-at-most.ts';
import { createSafeDispatcher, isBlockedAddressError } from '../../net/safe-dispatcher.ts';
import { EngineError } from '../render-job.ts';
import { FfmpegError, probeMedia, UnsupportedMediaError } from '../ffmpeg.ts';
import { ELEVENLABS_MAX_TEXT_CHARS } from './elevenlabs-limits.ts';
import { SpeechSentError, type SpeechEngine, type VoiceSettings } from './engine.ts';
import type { SpeechAudio } from './mp3.ts';

/*
 * The ElevenLabs API as an upstream speech engine (the spec's `voice_id`, `model` and
 * `voice_settings.stability`/`similarity_boost` are ElevenLabs' own names).
 *
 * Text to speech (https://elevenlabs.io/docs/api-reference/text-to-speech/convert):
 *   POST {base}/v1/text-to-speech/{voice_id}?output_format=mp3_44100_128
 *   xi-api-key: <key>, Content-Type: application/json
 *   {"text": ..., "model_id": ..., "voice_settings": {"stability": ..., "similarity_boost": ...}}
 *   -> 200 audio/mpeg, the MP3 bytes.
 * A text longer than its model takes (elevenlabs-limits.ts) is refused here, before any call.
 * Speech to speech, "voice changer" (https://elevenlabs.io/docs/api-reference/speech-to-speech/convert):
 *   POST {base}/v1/speech-to-speech/{voice_id}?output_format=mp3_44100_128
 *   xi-api-key: <key>, Content-Type: multipart/form-data
 *   parts: `audio` (the recording, a file), `model_id` (e.g. eleven_multilingual_sts_v2),
 *   `voice_settings` (a JSON-encoded string) -> 200 audio/mpeg.
 * Errors (https://elevenlabs.io/docs/eleven-api/resources/errors): JSON `{"detail": {...}}` with
 * `message` and `status` (legacy) or `type`/`code` (e.g. 401 invalid_api_key, 404
 * voice_not_found); request validation failures are 422 with FastAPI's
 * `{"detail": [{"loc": [...], "msg": ...}]}`; 429 is the rate limit (rate_limit_exceeded,
 * system_busy) or the plan's concurrency limit (too_many_concurrent_requests,
 * concurrent_limit_exceeded).
 *
 * The contract of each call, with its sources, is kept in test/contracts/elevenlabs/; the free
 * check of `adforge providers check` is elevenlabs-probe.ts.
 *
 * Failures are EngineErrors whose message the API caller sees (through the service's 502): they
 * never carry the API key, even when the provider's own words echo it. ElevenLabs bills speech
 * when it makes it and takes no idempotency key, so only answers that made nothing are transient:
 * a provider never reached, 408, 429 and 5xx (the official SDK, elevenlabs-js
 * src/core/fetcher/requestWithRetries.ts, resends exactly these). Once the request was sent, an
 * answer lost (a timeout, a reset, audio cut off) or unusable is a SpeechSentError: the speech
 * may be made and paid, and is not asked again. The provider refusing the request (other 4xx) is
 * not transient. No retries here: a voiceover is synchronous and its caller decides.
 *
 * Each call waits as long as the SDK does (240 s, its default `timeoutInSeconds` for text and
 * speech to speech), capped by UPSTREAM_CALL_TIMEOUT_SECONDS; the caller's signal bounds the
 * whole (SPEECH_TIMEOUT_SECONDS for a voiceover).
 */

export interface ElevenLabsEngineOptions {
  /** e.g. https://api.elevenlabs.io (a path prefix is kept). */
  baseUrl: string;
  apiKey: string;
  /** Catalogue voice UUID (lower case) -> the provider's voice id. */
  voiceIds: Readonly<Record<string, string>>;
  /** Text-to-speech model when the request names none. */
  defaultModel: string;
  /** Speech-to-speech model. */
  stsModel: string;
  /** One call's limit, its answer read whole; default the SDK's 240 s. */
  timeoutMs?: number;
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on each call's limit. */
  callTimeoutCapMs?: number;
  /** Lets the API live on a private/loopback address: local setups and tests only. */
  allowPrivate: boolean;
}

export const ELEVENLABS_OUTPUT_FORMAT = 'mp3_44100_128';
// elevenlabs-js src/api/resources/textToSpeech/client/Client.ts (and speechToSpeech): timeoutInSeconds ?? 240.
const SDK_TIMEOUT_MS = 240_000;
const MAX_AUDIO_BYTES = 64 * 1024 * 1024;
const MAX_ERROR_BYTES = 64 * 1024;
const MAX_QUOTE_CHARS = 300;
const PROVIDER = 'the voice provider';
const USER_AGENT = 'adforge/0.1 (+voiceovers)';

interface Body {
  bytes: Buffer;
  contentType: string;
}

export function createElevenLabsSpeechEngine(opts: ElevenLabsEngineOptions): SpeechEngine {
  const base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`);
  const redact = (text: string) => (opts.apiKey ? text.split(opts.apiKey).join('[redacted]') : text);

  function providerVoice(voice: CatalogueVoice): string {
    const id = opts.voiceIds[voice.id.toLowerCase()];
    if (!id) throw new EngineError(`the voice ${voice.name} (${voice.id}) is not available from ${PROVIDER}`, { transient: false });
    return id;
  }

  const timeoutMs = Math.min(opts.timeoutMs ?? SDK_TIMEOUT_MS, opts.callTimeoutCapMs ?? Infinity);
  const notAskedAgain = 'it was not asked again, since it bills the speech it makes';

  async function call(path: string, body: Body, signal: AbortSignal): Promise<SpeechAudio> {
    signal.throwIfAborted();
    const url = new URL(path, base);
    url.searchParams.set('output_format', ELEVENLABS_OUTPUT_FORMAT);
    const timer = AbortSignal.timeout(timeoutMs);
    const both = AbortSignal.any([signal, timer]);
    const dispatcher = createSafeDispatcher({ allowPrivate: opts.allowPrivate, connectTimeoutMs: Math.min(timeoutMs, 10_000) });
    let bytes: Buffer;
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { 'xi-api-key': opts.apiKey, 'content-type': body.contentType, accept: 'audio/mpeg', 'user-agent': USER_AGENT },
        body: body.bytes,
        dispatcher,
        signal: both,
      });
      if (res.statusCode < 200 || res.statusCode > 299) {
        const said = await readAtMost(res.body, MAX_ERROR_BYTES, () => tooMuch(MAX_ERROR_BYTES)).then(parseJson, () => undefined);
        throw statusFailure(res.statusCode, said, redact);
      }
      // A 200 past the cap is speech ElevenLabs made, and billed: never asked for again.
      bytes = await readAtMost(res.body, MAX_AUDIO_BYTES, () => new SpeechSentError(`${tooMuch(MAX_AUDIO_BYTES).message}; ${notAskedAgain}`, { answered: true }));
    } catch (e) {
      if (e instanceof EngineError) throw e;
      if (isBlockedAddressError(e)) throw new EngineError(`${PROVIDER} is at a private or reserved address`, { transient: false, cause: e });
      if (neverSent(e)) {
        if (signal.aborted) throw signal.reason;
        throw new EngineError(`${PROVIDER} could not be reached`, { transient: true, cause: e });
      }
      // Sent: ElevenLabs may have made, and billed, the speech whose answer is lost.
      const lost = timer.aborted ? `did not answer within ${timeoutMs / 1000} s` : signal.aborted ? 'was not waited for any longer' : 'lost its answer';
      throw new SpeechSentError(`${PROVIDER} ${lost}; ${notAskedAgain}`, { answered: false, cause: e });
    } finally {
      await dispatcher.destroy().catch(() => {});
    }
    // Made and paid: whatever goes wrong from here, the speech is not asked for again.
    return measure(bytes, signal);
  }

  return {
    name: 'elevenlabs',
    bills: true,

    async textToSpeech(job, signal) {
      const voiceId = providerVoice(job.voice);
      const settings = voiceSettings(job.settings);
      const model = job.model ?? opts.defaultModel;
      // The provider would refuse it (400 max_character_limit_exceeded): say so without a call.
      const max = ELEVENLABS_MAX_TEXT_CHARS[model];
      const length = [...job.text].length;
      if (max !== undefined && length > max) {
        const n = (x: number) => x.toLocaleString('en-US');
        throw new EngineError(`${PROVIDER}'s model ${model} takes at most ${n(max)} characters a request; this text has ${n(length)}`, { transient: false });
      }
      const json = { text: job.text, model_id: model, ...(settings ? { voice_settings: settings } : {}) };
      const body = { bytes: Buffer.from(JSON.stringify(json)), contentType: 'application/json' };
      return call(`v1/text-to-speech/${encodeURIComponent(voiceId)}`, body, signal);
    },

    async speechToSpeech(job, signal) {
      const voiceId = providerVoice(job.voice);
      const settings = voiceSettings(job.settings);
      const type = await fileTypeFromBuffer(job.input).catch(() => undefined);
      const body = await multipart([
        ['audio', new Blob([new Uint8Array(job.input)], { type: type?.mime ?? 'application/octet-stream' }), type ? `audio.${type.ext}` : 'audio'],
        ['model_id', opts.stsModel],
        ...(settings ? [['voice_settings', JSON.stringify(settings)] as [string, string]] : []),
      ]);
      return call(`v1/speech-to-speech/${encodeURIComponent(voiceId)}`, body, signal);
    },
  };
}

/** Only the settings the API takes from us; an empty object is left out (the API refuses `{}`). */
function voiceSettings(s: VoiceSettings | undefined): VoiceSettings | undefined {
  const out: VoiceSettings = {};
  if (s?.stability !== undefined) out.stability = s.stability;
  if (s?.similarity_boost !== undefined) out.similarity_boost = s.similarity_boost;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * multipart/form-data encoded by the platform's own FormData (undici's), read whole: the body is
 * small, and a known length keeps the upload a single plain request.
 */
async function multipart(fields: Array<[name: string, value: string | Blob, filename?: string]>): Promise<Body> {
  const form = new FormData();
  for (const [name, value, filename] of fields) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, value, filename);
  }
  const encoded = new Response(form);
  return { bytes: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}

/** The answer must be MP3 audio ffprobe can read: its measured length is the voiceover's duration. */
async function measure(bytes: Buffer, signal: AbortSignal): Promise<SpeechAudio> {
  const notAudio = (cause?: unknown) => new SpeechSentError(`${PROVIDER} answered with something that is not MP3 audio`, { answered: true, cause });
  let info;
  try {
    info = await probeMedia(bytes, { signal });
  } catch (e) {
    if (e instanceof UnsupportedMediaError) throw notAudio(e);
    if (signal.aborted || !(e instanceof FfmpegError)) throw e;
    if (e.reason === 'failed') throw notAudio(e);
    throw new SpeechSentError(`${PROVIDER}'s audio could not be measured`, { answered: true, cause: e });
  }
  if (info.audioCodec !== 'mp3' || !info.durationSeconds || info.durationSeconds <= 0) throw notAudio();
  return { bytes, mime: 'audio/mpeg', durationSeconds: info.durationSeconds };
}

function statusFailure(status: number, said: unknown, redact: (s: string) => string): EngineError {
  if (status === 429) {
    const code = errorCode(said);
    return new EngineError(`${PROVIDER} is rate-limiting requests (HTTP 429${code ? `: ${code}` : ''}); try again later`, { transient: true });
  }
  if (status >= 500 || status === 408) return new EngineError(`${PROVIDER} failed (HTTP ${status})`, { transient: true });
  if (status < 400) return new EngineError(`${PROVIDER} answered HTTP ${status} instead of audio`, { transient: false });
  const message = providerMessage(said, redact);
  return new EngineError(`${PROVIDER} refused the request (HTTP ${status}${message ? `: ${message}` : ''})`, { transient: false });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

/** `code` (or the legacy `status`) of `{detail: {...}}`, when it is a plain token such as too_many_concurrent_requests. */
function errorCode(said: unknown): string | undefined {
  const detail = isRecord(said) ? said.detail : undefined;
  const code = isRecord(detail) ? (str(detail.code) ?? str(detail.status)) : undefined;
  return code && /^[a-z0-9_]{1,60}$/i.test(code) ? code : undefined;
}

/** The provider's own words, key redacted and kept short: `code: message`, or the 422 field list. */
function providerMessage(said: unknown, redact: (s: string) => string): string | undefined {
  if (!isRecord(said)) return undefined;
  const detail = said.detail;
  let text: string | undefined;
  if (Array.isArray(detail)) {
    text = detail
      .slice(0, 3)
      .map((d) => {
        if (!isRecord(d)) return str(d);
        const loc = Array.isArray(d.loc) ? d.loc.filter((l, i) => !(i === 0 && l === 'body')).join('.') : undefined;
        const msg = str(d.msg);
        return loc && msg ? `${loc}: ${msg}` : msg;
      })
      .filter(Boolean)
      .join('; ');
  } else if (isRecord(detail)) {
    const code = errorCode(said);
    const message = str(detail.message);
    text = [code, message].filter(Boolean).join(': ');
  } else {
    text = str(detail) ?? str(said.message);
  }
  if (!text) return undefined;
  const clean = redact(text).replace(/\s+/g, ' ');
  return clean.length > MAX_QUOTE_CHARS ? `${clean.slice(0, MAX_QUOTE_CHARS - 3)}...` : clean;
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

const tooMuch = (maxBytes: number) => new EngineError(`${PROVIDER} answered with more than ${Math.round(maxBytes / 1024 / 1024)} MB`, { transient: false });
