import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { runFfmpeg } from '../../src/adapters/engines/ffmpeg.ts';
import { closeServer, listenOnLoopback } from './http-fake.ts';

/**
 * A local stand-in for the ElevenLabs API (https://elevenlabs.io/docs/api-reference): text to
 * speech and speech to speech, answering real MP3s made with ffmpeg. Every request is recorded
 * (body parsed: JSON, or the multipart parts); `control` switches the answers per test.
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

export type FakeFailure = 500 | 503 | 429 | 401 | 404 | 422 | 'not-audio';

export interface FakeControl {
  /** The key requests must carry; another one gets 401 invalid_api_key (echoing it, as a careless server might). */
  apiKey: string;
  /** Provider voice ids that exist; another one gets 404 voice_not_found. */
  voices: Set<string>;
  /** Answer this failure `times` times (or always) instead of audio. */
  fail: { with: FakeFailure; times: number | 'always' } | undefined;
  /** Hold every answer this long (timeouts). */
  delayMs: number;
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

const ROUTE = /^\/v1\/(text-to-speech|speech-to-speech)\/([^/]+)$/;

async function parseParts(raw: Buffer, contentType: string): Promise<FakePart[] | undefined> {
  if (!contentType.startsWith('multipart/form-data')) return undefined;
  try {
    const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
    const parts: FakePart[] = [];
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') parts.push({ name, filename: undefined, contentType: undefined, value });
      else parts.push({ name, filename: value.name, contentType: value.type || undefined, value: Buffer.from(await value.arrayBuffer()) });
    }
    return parts;
  } catch {
    return undefined;
  }
}

function failure(kind: FakeFailure, key: string): { status: number; type: string; body: string | Buffer } {
  const json = (status: number, body: unknown) => ({ status, type: 'application/json', body: JSON.stringify(body) });
  switch (kind) {
    case 500:
      return json(500, { detail: { status: 'internal_error', message: 'An internal server error occurred.' } });
    case 503:
      return { status: 503, type: 'text/html', body: '<html><body>Service Unavailable</body></html>' };
    case 429:
      return json(429, { detail: { status: 'too_many_concurrent_requests', message: 'Too many concurrent requests.' } });
    case 401:
      return json(401, { detail: { status: 'invalid_api_key', message: `Invalid API key: ${key}` } });
    case 404:
      return json(404, { detail: { status: 'voice_not_found', message: 'A voice with the voice_id nope was not found.' } });
    case 422:
      return json(422, { detail: [{ type: 'missing', loc: ['body', 'text'], msg: 'Field required', input: null }] });
    case 'not-audio':
      // 200 with the declared type of audio, but a JSON body: only the bytes can tell.
      return { status: 200, type: 'audio/mpeg', body: JSON.stringify({ ok: true, note: 'this is not audio' }) };
  }
}

export async function startElevenLabsFake(opts: { apiKey?: string; voices?: string[] } = {}) {
  const mp3 = await fakeAudio();
  const control: FakeControl = {
    apiKey: opts.apiKey ?? 'xi-test-key-0123456789abcdef',
    voices: new Set(opts.voices ?? ['EXAVITQu4vr4xnSDxMaL', 'pNInz6obpgDQGcFmaJgB']),
    fail: undefined,
    delayMs: 0,
  };
  const requests: FakeRequest[] = [];
  const initialKey = control.apiKey;

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://fake');
    const contentType = String(req.headers['content-type'] ?? '');
    let json: unknown;
    if (contentType.startsWith('application/json')) {
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
    }
    const parts = await parseParts(raw, contentType);
    const key = String(req.headers['xi-api-key'] ?? '');

    const answer = ((): { status: number; type: string; body: string | Buffer } => {
      const route = ROUTE.exec(url.pathname);
      if (req.method !== 'POST' || !route) return { status: 404, type: 'application/json', body: '{"detail":"Not Found"}' };
      if (key !== control.apiKey) return failure(401, key);
      const { fail } = control;
      if (fail && (fail.times === 'always' || fail.times > 0)) {
        if (fail.times !== 'always') fail.times -= 1;
        return failure(fail.with, key);
      }
      if (!control.voices.has(decodeURIComponent(route[2]!))) return failure(404, key);
      if (route[1] === 'text-to-speech') {
        const text = typeof json === 'object' && json !== null ? (json as { text?: unknown }).text : undefined;
        if (typeof text !== 'string' || !text) return failure(422, key);
        return { status: 200, type: 'audio/mpeg', body: mp3.tts };
      }
      if (!parts?.some((p) => p.name === 'audio' && Buffer.isBuffer(p.value))) {
        return { status: 422, type: 'application/json', body: JSON.stringify({ detail: [{ type: 'missing', loc: ['body', 'audio'], msg: 'Field required', input: null }] }) };
      }
      return { status: 200, type: 'audio/mpeg', body: mp3.sts };
    })();

    requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, raw, json, parts, status: answer.status });
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(answer.status, { 'content-type': answer.type, 'content-length': Buffer.byteLength(answer.body) });
      res.end(answer.body);
    };
    if (control.delayMs > 0) setTimeout(send, control.delayMs).unref();
    else send();
  });
  const baseUrl = await listenOnLoopback(server);

  return {
    baseUrl,
    port: Number(new URL(baseUrl).port),
    control,
    requests,
    audio: mp3,
    /** Back to answering audio to everyone, with the recorded requests forgotten. */
    reset() {
      control.apiKey = initialKey;
      control.fail = undefined;
      control.delayMs = 0;
      requests.length = 0;
    },
    close: () => closeServer(server),
  };
}

export type ElevenLabsFake = Awaited<ReturnType<typeof startElevenLabsFake>>;
