import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { runFfmpeg } from '../../src/adapters/engines/ffmpeg.ts';
import { checkAnswer, formFields, loadContract, requestProblems, type Contract, type ContractProblem } from './contract.ts';
import { closeServer, listenOnLoopback } from './http-fake.ts';

/**
 * A local stand-in for the ElevenLabs API (https://elevenlabs.io/docs/api-reference): text to
 * speech and speech to speech, answering real MP3s made with ffmpeg, and the free reads of
 * `adforge providers check` (GET /v1/user/subscription, /v1/models, /v1/voices/{voice_id}). Every
 * request is recorded (body parsed: JSON, or the multipart parts); `control` switches the answers.
 *
 * Every request is held to its contract (test/contracts/elevenlabs/) and refused the way
 * ElevenLabs refuses it:
 * - a wrong key: 401 {detail: {type, code: invalid_api_key, status, message}}
 *   (https://elevenlabs.io/docs/eleven-api/resources/errors: the detail body, `status` legacy);
 * - a field the call does not take, a missing, mistyped or out-of-range one: 422 with FastAPI's
 *   {detail: [{loc: ['body' | 'query' | 'header', ...], msg, type}]} (the OpenAPI's
 *   HTTPValidationError for every call);
 * - a text longer than its model takes: 400 {detail: {status: max_character_limit_exceeded, message}}
 *   (help.elevenlabs.io "API Error Code 400 or 401", its example message's wording);
 * - an unknown voice: 404 {detail: {type: not_found, code: voice_not_found, ...}} (the errors page's
 *   code; the help article files voice_not_found under 400/401, so the adapter reads the code);
 * - a free read the key is not permitted (`control.deniedReads`): 401 code missing_permissions, as
 *   for a key restricted to speech (the message's wording is not in the pages read; only the code
 *   is relied on).
 * Its own answers are checked against the contract too (checkAnswer); the failure hooks
 * (`control.fail`) send what a broken provider or its front server would, on purpose.
 *
 * What it costs and how it holds up under load, as ElevenLabs documents it:
 * - Speech is billed when it is made (text to speech by its characters): every speech answer of
 *   200 is listed in `billed`, counted when the audio is made, so a caller that gave up before a
 *   held answer (`control.delayMs`) or whose answer was cut off (`fail: 'cut'`) was billed all the
 *   same. ElevenLabs offers no idempotency key: a request sent twice is made and billed twice.
 * - The plan's concurrency limit (`control.concurrency`; Free 2 ... Scale 15, help.elevenlabs.io
 *   "API Error Code 429"): requests past it wait in ElevenLabs' queue (`control.queue` of them;
 *   elevenlabs.io/docs models, "Concurrency and priority": queued, ~50 ms more) and past that
 *   are refused 429 too_many_concurrent_requests (the help article's word, as the legacy
 *   `status`; the errors page names the code concurrent_limit_exceeded without an example body,
 *   so the fake keeps the article's). Answers then carry current-concurrent-requests
 *   and maximum-concurrent-requests (ElevenLabs' blog "AI rate limiting for voice").
 * - system_busy (`fail: 'system-busy'`): 429 when ElevenLabs is overloaded; "if you retry the
 *   request, it will succeed" (the same help article). Nothing is made or billed.
 */

export interface FakePart {
  name: string;
  filename: string | undefined;
  contentType: string | undefined;
  /** Text parts as text; files as bytes. */
  value: string | Buffer;
}

export interface FakeRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  /** Text to speech: the parsed JSON body (undefined when it is not JSON). */
  json: unknown;
  /** Speech to speech: the multipart parts, in order. */
  parts: FakePart[] | undefined;
  status: number;
}

/** 429: the plan's concurrency; 'system-busy': ElevenLabs overloaded; 'cut': the audio made and billed, its answer cut off half-way. */
export type FakeFailure = 500 | 503 | 429 | 401 | 404 | 422 | 'not-audio' | 'system-busy' | 'cut';

export interface FakeControl {
  /** The key requests must carry; another one gets 401 invalid_api_key (echoing it, as a careless server might). */
  apiKey: string;
  /** Provider voice ids that exist; another one gets 404 voice_not_found (speech and GET /v1/voices/{id}). */
  voices: Set<string>;
  /** Answer this failure `times` times (or always) instead of audio. */
  fail: { with: FakeFailure; times: number | 'always' } | undefined;
  /** Hold every answer this long (timeouts); speech is made and billed at once all the same. */
  delayMs: number;
  /** Speech requests made at once (the plan's concurrency limit); undefined: no limit. */
  concurrency: number | undefined;
  /** Requests past the concurrency limit that wait their turn; one more is refused 429. */
  queue: number;
  /** What GET /v1/models lists. */
  models: Array<Record<string, unknown>>;
  /** Free reads the key may not make: 401 missing_permissions, as for a key limited to speech. */
  deniedReads: Set<'user' | 'models' | 'voices'>;
  /** character_count of GET /v1/user/subscription. */
  charactersUsed: number;
}

export const TTS_SECONDS = 2;
export const STS_SECONDS = 3;

let audio: Promise<{ tts: Buffer; sts: Buffer }> | undefined;

/** Two real MP3s of known length (mono 44.1 kHz, as mp3_44100_128 would be), made once per test process. */
export function fakeAudio(): Promise<{ tts: Buffer; sts: Buffer }> {
  audio ??= (async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-fake-elevenlabs-'));
    try {
      const make = async (name: string, frequency: number, seconds: number) => {
        const file = path.join(dir, name);
        await runFfmpeg(['-f', 'lavfi', '-i', `sine=frequency=${frequency}:sample_rate=44100:duration=${seconds}`, '-ac', '1', '-c:a', 'libmp3lame', '-b:a', '128k', file]);
        return fs.readFile(file);
      };
      const [tts, sts] = await Promise.all([make('tts.mp3', 440, TTS_SECONDS), make('sts.mp3', 220, STS_SECONDS)]);
      return { tts, sts };
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  })();
  return audio;
}

const SPEECH = /^\/v1\/(text-to-speech|speech-to-speech)\/([^/]+)$/;
const VOICE = /^\/v1\/voices\/([^/]+)$/;

const contracts = {
  'text-to-speech': loadContract('elevenlabs', 'text-to-speech'),
  'speech-to-speech': loadContract('elevenlabs', 'speech-to-speech'),
  models: loadContract('elevenlabs', 'models'),
  voice: loadContract('elevenlabs', 'voice'),
  subscription: loadContract('elevenlabs', 'user-subscription'),
};

/** What GET /v1/models answers by default: the models adforge routes to, with the documented limits. */
export const FAKE_MODELS = [
  { model_id: 'eleven_multilingual_v2', name: 'Eleven Multilingual v2', can_do_text_to_speech: true, can_do_voice_conversion: false, maximum_text_length_per_request: 10_000, max_characters_request_subscribed_user: 10_000 },
  { model_id: 'eleven_v3', name: 'Eleven v3', can_do_text_to_speech: true, can_do_voice_conversion: false, maximum_text_length_per_request: 5_000, max_characters_request_subscribed_user: 5_000 },
  { model_id: 'eleven_flash_v2_5', name: 'Eleven Flash v2.5', can_do_text_to_speech: true, can_do_voice_conversion: false, maximum_text_length_per_request: 40_000, max_characters_request_subscribed_user: 40_000 },
  { model_id: 'eleven_turbo_v2_5', name: 'Eleven Turbo v2.5', can_do_text_to_speech: true, can_do_voice_conversion: false, maximum_text_length_per_request: 40_000, max_characters_request_subscribed_user: 40_000 },
  { model_id: 'eleven_multilingual_sts_v2', name: 'Eleven Multilingual v2 (speech to speech)', can_do_text_to_speech: false, can_do_voice_conversion: true },
  { model_id: 'eleven_english_sts_v2', name: 'Eleven English v2 (speech to speech)', can_do_text_to_speech: false, can_do_voice_conversion: true },
];

async function parseParts(raw: Buffer, contentType: string): Promise<{ parts: FakePart[]; form: FormData } | undefined> {
  if (!contentType.startsWith('multipart/form-data')) return undefined;
  try {
    const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
    const parts: FakePart[] = [];
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') parts.push({ name, filename: undefined, contentType: undefined, value });
      else parts.push({ name, filename: value.name, contentType: value.type || undefined, value: Buffer.from(await value.arrayBuffer()) });
    }
    return { parts, form };
  } catch {
    return undefined;
  }
}

type Answer = { status: number; type: string; body: string | Buffer };
const json = (status: number, body: unknown): Answer => ({ status, type: 'application/json', body: JSON.stringify(body) });

function failure(kind: FakeFailure, key: string): Answer {
  switch (kind) {
    case 500:
      return json(500, { detail: { status: 'internal_error', message: 'An internal server error occurred.' } });
    case 503:
      return { status: 503, type: 'text/html', body: '<html><body>Service Unavailable</body></html>' };
    case 429:
      return json(429, { detail: { status: 'too_many_concurrent_requests', message: 'Too many concurrent requests.' } });
    case 'system-busy':
      return json(429, { detail: { status: 'system_busy', message: 'Our services are experiencing high levels of traffic and your request could not be processed.' } });
    case 401:
      return json(401, { detail: { type: 'authentication_error', code: 'invalid_api_key', status: 'invalid_api_key', message: `Invalid API key: ${key}` } });
    case 404:
      return notFound('nope');
    case 422:
      return json(422, { detail: [{ type: 'missing', loc: ['body', 'text'], msg: 'Field required', input: null }] });
    case 'cut':
      throw new Error('a cut answer is audio sent half-way, not an answer of its own');
    case 'not-audio':
      // 200 with the declared type of audio, but a JSON body: only the bytes can tell.
      return { status: 200, type: 'audio/mpeg', body: JSON.stringify({ ok: true, note: 'this is not audio' }) };
  }
}

const notFound = (voiceId: string): Answer =>
  json(404, { detail: { type: 'not_found', code: 'voice_not_found', status: 'voice_not_found', message: `A voice with the voice_id ${voiceId} was not found.` } });

const missingPermission = (permission: string): Answer =>
  json(401, { detail: { type: 'authorization_error', code: 'missing_permissions', status: 'missing_permissions', message: `The API key you used is missing the permission ${permission} to execute this operation.` } });

// FastAPI's names for what went wrong, by the kind of contract problem.
const PYDANTIC_TYPE: Record<ContractProblem['kind'], string> = { missing: 'missing', unknown: 'extra_forbidden', type: 'type_error', enum: 'enum', invalid: 'value_error' };

/** A request that breaks its contract, refused as ElevenLabs would; undefined when it holds. */
function contractRefusal(c: Contract, r: { headers: http.IncomingHttpHeaders; query: Record<string, string>; body?: unknown }): Answer | undefined {
  const problems = requestProblems(c, { headers: r.headers as Record<string, unknown>, query: r.query, ...(c.request.body ? { body: r.body } : {}) });
  if (problems.length === 0) return undefined;
  const tooLong = problems.find((p) => p.where === 'body' && p.path.length === 1 && p.path[0] === 'text' && /more than \d+ characters/.test(p.message));
  if (tooLong && typeof (r.body as { text?: unknown })?.text === 'string') {
    const has = [...(r.body as { text: string }).text].length;
    const limit = /more than (\d+) characters/.exec(tooLong.message)![1];
    return json(400, { detail: { status: 'max_character_limit_exceeded', message: `This request's text has ${has} characters and exceeds the character limit of ${limit} characters.` } });
  }
  return json(422, { detail: problems.map((p) => ({ type: PYDANTIC_TYPE[p.kind], loc: [p.where, ...p.path], msg: p.message, input: null })) });
}

export async function startElevenLabsFake(opts: { apiKey?: string; voices?: string[] } = {}) {
  const mp3 = await fakeAudio();
  const control: FakeControl = {
    apiKey: opts.apiKey ?? 'xi-test-key-0123456789abcdef',
    voices: new Set(opts.voices ?? ['EXAVITQu4vr4xnSDxMaL', 'pNInz6obpgDQGcFmaJgB']),
    fail: undefined,
    delayMs: 0,
    concurrency: undefined,
    queue: 0,
    models: structuredClone(FAKE_MODELS),
    deniedReads: new Set(),
    charactersUsed: 1_234,
  };
  const requests: FakeRequest[] = [];
  /** Speech ElevenLabs made and billed, in order (text to speech by its characters). */
  const billed: Array<{ path: string; characters: number | undefined }> = [];
  const initialKey = control.apiKey;
  /** Speech requests being made now, and those waiting for a concurrency slot. */
  let making = 0;
  const waiting: Array<() => void> = [];

  /** The answer to one request, its contract checked. */
  function answer(req: http.IncomingMessage, url: URL, key: string, body: { json: unknown; form: FormData | undefined; fields: Record<string, unknown> | undefined }): { contract?: Contract; a: Answer; cut?: boolean } {
    const query = Object.fromEntries(url.searchParams);
    const speech = SPEECH.exec(url.pathname);
    const voice = VOICE.exec(url.pathname);
    const read =
      req.method !== 'GET'
        ? undefined
        : url.pathname === '/v1/user/subscription'
          ? ({ contract: contracts.subscription, permission: 'user_read', name: 'user' } as const)
          : url.pathname === '/v1/models'
            ? ({ contract: contracts.models, permission: 'models_read', name: 'models' } as const)
            : voice
              ? ({ contract: contracts.voice, permission: 'voices_read', name: 'voices' } as const)
              : undefined;
    if (read) {
      if (key !== control.apiKey) return { contract: read.contract, a: failure(401, key) };
      if (control.deniedReads.has(read.name)) return { contract: read.contract, a: missingPermission(read.permission) };
      const refused = contractRefusal(read.contract, { headers: req.headers, query });
      if (refused) return { contract: read.contract, a: refused };
      if (read.name === 'user') return { contract: read.contract, a: json(200, { tier: 'creator', character_count: control.charactersUsed, character_limit: 100_000, status: 'active' }) };
      if (read.name === 'models') return { contract: read.contract, a: json(200, control.models) };
      const id = decodeURIComponent(voice![1]!);
      return { contract: read.contract, a: control.voices.has(id) ? json(200, { voice_id: id, name: `Voice ${id.slice(0, 4)}`, category: 'premade' }) : notFound(id) };
    }
    if (req.method !== 'POST' || !speech) return { a: { status: 404, type: 'application/json', body: '{"detail":"Not Found"}' } };
    const contract = contracts[speech[1] as 'text-to-speech' | 'speech-to-speech'];
    if (key !== control.apiKey) return { contract, a: failure(401, key) };
    const { fail } = control;
    let cut = false;
    if (fail && (fail.times === 'always' || fail.times > 0)) {
      if (fail.times !== 'always') fail.times -= 1;
      if (fail.with === 'cut') cut = true;
      else return { a: failure(fail.with, key) }; // on purpose, whatever its contract says
    }
    const refused = contractRefusal(contract, { headers: req.headers, query, body: speech[1] === 'text-to-speech' ? body.json : body.fields });
    if (refused) return { contract, a: refused };
    if (!control.voices.has(decodeURIComponent(speech[2]!))) return { contract, a: notFound(decodeURIComponent(speech[2]!)) };
    const text = (body.json as { text?: unknown } | undefined)?.text;
    billed.push({ path: url.pathname, characters: speech[1] === 'text-to-speech' && typeof text === 'string' ? [...text].length : undefined });
    return { contract, a: { status: 200, type: 'audio/mpeg', body: speech[1] === 'text-to-speech' ? mp3.tts : mp3.sts }, ...(cut ? { cut } : {}) };
  }

  /** A concurrency slot for a speech request: at once, after a wait in ElevenLabs' queue, or none (429). */
  async function slot(): Promise<boolean> {
    if (control.concurrency === undefined) return true;
    if (making < control.concurrency) {
      making++;
      return true;
    }
    if (waiting.length >= control.queue) return false;
    await new Promise<void>((resolve) => waiting.push(resolve));
    return true;
  }
  /** The slot passes to the next request waiting, if any. */
  function release(): void {
    if (control.concurrency === undefined) return;
    const next = waiting.shift();
    if (next) next();
    else making--;
  }

  const server = http.createServer((req, res) => {
    // An answer outside the contract fails the test (an unhandled rejection) and the request alike.
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(e));
      throw e;
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://fake');
    const contentType = String(req.headers['content-type'] ?? '');
    let parsed: unknown;
    if (contentType.startsWith('application/json')) {
      try {
        parsed = JSON.parse(raw.toString('utf8'));
      } catch {
        parsed = undefined;
      }
    }
    const multipart = await parseParts(raw, contentType);
    const fields = multipart ? await formFields(multipart.form) : undefined;
    const key = String(req.headers['xi-api-key'] ?? '');

    const isSpeech = req.method === 'POST' && SPEECH.test(url.pathname);
    const slotted = isSpeech ? await slot() : true;
    const record = (status: number) =>
      requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, raw, json: parsed, parts: multipart?.parts, status });
    if (!slotted) {
      const busy = failure(429, key);
      record(busy.status);
      res.writeHead(busy.status, { 'content-type': busy.type, ...limitHeaders() }).end(busy.body);
      return;
    }
    const { contract, a, cut } = answer(req, url, key, { json: parsed, form: multipart?.form, fields });
    if (contract && a.type === 'application/json') checkAnswer(contract, a.status, JSON.parse(a.body.toString()));
    if (contract && a.type === 'audio/mpeg') checkAnswer(contract, a.status, Buffer.from(a.body).toString('base64'));
    record(a.status);
    const send = () => {
      if (isSpeech) release();
      if (res.destroyed) return;
      res.writeHead(a.status, { 'content-type': a.type, 'content-length': Buffer.byteLength(a.body), ...(isSpeech ? limitHeaders() : {}) });
      if (!cut) {
        res.end(a.body);
        return;
      }
      // Half the audio, then the connection goes: the speech was made (and billed) all the same.
      const bytes = Buffer.from(a.body);
      res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => setTimeout(() => res.destroy(), 20));
    };
    if (control.delayMs > 0) setTimeout(send, control.delayMs).unref();
    else send();
  }

  /** Where the account stands against its concurrency limit, as ElevenLabs' answers say it. */
  function limitHeaders(): Record<string, string> {
    if (control.concurrency === undefined) return {};
    return { 'current-concurrent-requests': String(making), 'maximum-concurrent-requests': String(control.concurrency) };
  }
  const baseUrl = await listenOnLoopback(server);

  return {
    baseUrl,
    port: Number(new URL(baseUrl).port),
    control,
    requests,
    billed,
    audio: mp3,
    /** Back to answering audio to everyone, with the recorded requests forgotten. */
    reset() {
      control.apiKey = initialKey;
      control.fail = undefined;
      control.delayMs = 0;
      control.concurrency = undefined;
      control.queue = 0;
      billed.length = 0;
      control.models = structuredClone(FAKE_MODELS);
      control.deniedReads = new Set();
      requests.length = 0;
    },
    close: () => closeServer(server),
  };
}

export type ElevenLabsFake = Awaited<ReturnType<typeof startElevenLabsFake>>;
