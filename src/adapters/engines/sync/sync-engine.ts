import { createHmac, timingSafeEqual } from 'node:crypto';
import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { stillVideo } from '../../media/still-video.ts';
import { probeMedia } from '../ffmpeg.ts';
import { readBounded } from '../bounded-read.ts';
import { ProviderAnswerError, createProviderClient } from '../upstream-http.ts';
import { uploadTimeoutMs } from '../upload-timeout.ts';
import { createSyncCheck } from './sync-check.ts';
import { SYNC_MAX_UPLOAD_BYTES, SYNC_MODELS } from './sync-limits.ts';
import { UpstreamError, type Engine, type UpstreamRequest, type UpstreamStatus } from '../engine-contract.ts';
import { queued, running } from '../progress.ts';

/*
 * sync.so's API, held to the contracts in test/contracts/sync/ (synchronicity-labs/sync-typescript-sdk
 * at f0fef21 and sync's API reference): POST /v2/generate as the multipart form of the SDK's
 * createWithFiles (`video` and `audio` files, `model`, `options` as JSON, `webhookUrl`) with an
 * `Idempotency-Key` (our attempt id: a submit whose answer was lost is sent again and sync answers
 * with the same generation; its IDEMPOTENCY_* answers mean wait and ask again under that key); GET /v2/generate/{id}, whose status is PENDING | PROCESSING, then
 * COMPLETED with outputUrl or FAILED | REJECTED | CANCELED | TIMED_OUT with sync's reason in
 * `error`; GET /v2/models for the operator's check. Webhooks as synchronicity-labs/docs-v2
 * api-reference/webhooks.mdx describes them: `Sync-Signature: t=<unix>,v1=<hex>`, HMAC-SHA256 with
 * the webhook signing secret over `<t>.<JSON payload>`. Auth `x-api-key`. sync animates a video,
 * so a talking avatar's image becomes a still video of the speech's length.
 */
export interface SyncOptions {
  apiUrl: string;
  apiKey: string;
  /** The webhook signing secret (SYNC_WEBHOOK_SECRET); without it webhooks are neither asked for nor accepted. */
  webhookSecret?: string;
  allowPrivate: boolean;
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on every call's own timeout. */
  callTimeoutCapMs?: number;
  /** One time limit for every call (tests); otherwise each call has sync's own. */
  timeoutMs?: number;
}

const MAX_JSON_BYTES = 1024 * 1024;
// sync's own SDK gives each request 60 s (@sync.so/sdk 0.3.0, every client method's default
// timeoutInSeconds); the create's files add the time they take to send.
const CALL_TIMEOUT_MS = 60_000;
const HOOK_TOLERANCE_SECONDS = 300;
/** The statuses of a generation sync is still working on. */
export const SYNC_WORKING: readonly string[] = ['PENDING', 'PROCESSING'];
/**
 * The statuses that end a generation without a video (docs.sync.so get-generate lists PENDING,
 * PROCESSING, COMPLETED, FAILED, REJECTED, CANCELED, TIMED_OUT), each with sync's reason in `error`.
 */
export const SYNC_ENDINGS: Readonly<Record<string, string>> = {
  FAILED: 'could not make the video',
  REJECTED: 'rejected the video',
  CANCELED: 'canceled the video',
  TIMED_OUT: 'timed out making the video',
};

// GET /v2/generations takes a limit of 1 to 100.
const LIST_LIMIT = 100;

/** A generation as GET /v2/generate/{id} and GET /v2/generations show it; undefined for a status sync does not document. */
function syncStatus(g: Record<string, unknown>): UpstreamStatus | undefined {
  // sync gives states only: PENDING is waiting for a worker, PROCESSING is running.
  if (SYNC_WORKING.includes(String(g.status))) return { state: 'pending', detail: String(g.status), progress: g.status === 'PENDING' ? queued() : running() };
  const ending = typeof g.status === 'string' ? SYNC_ENDINGS[g.status] : undefined;
  if (ending) return { state: 'failed', message: `sync ${ending}: ${typeof g.error === 'string' && g.error ? g.error.slice(0, 500) : String(g.status).toLowerCase()}` };
  if (g.status !== 'COMPLETED') return undefined;
  if (typeof g.outputUrl !== 'string') return { state: 'failed', message: 'sync finished without a video' };
  return { state: 'succeeded', outputs: [{ url: g.outputUrl }] };
}

/** sync's error body (the SDK's GenerationError): `message`, a string or a list of them. */
function syncMessage(json: unknown): string | undefined {
  const m = (json as { message?: unknown } | undefined)?.message;
  const text = Array.isArray(m) ? m.filter((x) => typeof x === 'string').join('; ') : m;
  return typeof text === 'string' && text ? text.slice(0, 500) : undefined;
}

/**
 * sync's IDEMPOTENCY_* answers to a keyed create (its error-handling page: a lost answer or
 * IDEMPOTENCY_OUTCOME_UNKNOWN "does not authorize a fresh key or an unkeyed retry"; its idempotency
 * guide names the rest): the first request under the key may be making, and billing, a generation.
 * One that names its `generationId` ("an unknown response may include generationId; poll it") is
 * that generation; any other means wait, and ask again under the same key. Any other error stays as
 * read. INVALID_IDEMPOTENCY_KEY (a malformed key, 400) is a refusal like any other.
 */
function idempotencyAnswer(e: unknown): Record<string, unknown> {
  if (!(e instanceof ProviderAnswerError)) throw e;
  const b = e.body as { errorCode?: unknown; generationId?: unknown } | undefined;
  const code = typeof b?.errorCode === 'string' ? b.errorCode : '';
  if (!code.startsWith('IDEMPOTENCY_')) throw e;
  if (typeof b?.generationId === 'string' && b.generationId) return { id: b.generationId };
  throw new UpstreamError('in_progress', `sync has not settled the first request under this key (${code.slice(0, 60)}); it is asked again under the same key`, { cause: e });
}

export function createSyncEngine(opts: SyncOptions): Engine {

  const { json: call, call: request, dispatcher } = createProviderClient({
    provider: 'sync',
    baseUrl: opts.apiUrl,
    allowPrivate: opts.allowPrivate,
    callTimeoutCapMs: opts.callTimeoutCapMs,
    headers: { 'x-api-key': opts.apiKey, accept: 'application/json' },
    timeoutMs: opts.timeoutMs ?? CALL_TIMEOUT_MS,
    maxBytes: MAX_JSON_BYTES,
    message: syncMessage,
  });

  async function submit({ params, inputs }: UpstreamRequest, attemptId: string, webhookUrl: string | undefined, signal: AbortSignal) {
    if (!inputs.face || !inputs.speech) throw new UpstreamError('refused', 'the talking avatar has no face or no speech');
    const tooLarge = () => new UpstreamError('refused', 'an input is larger than the 20 MB sync takes');
    // The speech goes inline: read up to sync's own limit, not past it.
    const audio = await readBounded(inputs.speech, signal, SYNC_MAX_UPLOAD_BYTES, tooLarge);
    const face = await inputs.face.read(signal);
    const seconds = (await probeMedia(audio.bytes)).durationSeconds ?? 1;
    const video = await stillVideo(face.bytes, seconds, signal);
    if (video.length > SYNC_MAX_UPLOAD_BYTES) throw tooLarge();
    const form = new FormData();
    form.append('model', SYNC_MODELS[String(params.lipsync_model)] ?? 'lipsync-2');
    form.append('video', new Blob([new Uint8Array(video)], { type: 'video/mp4' }), 'face.mp4');
    form.append('audio', new Blob([new Uint8Array(audio.bytes)], { type: audio.mime }), audio.mime === 'audio/mpeg' ? 'speech.mp3' : 'speech.wav');
    // cut_off: the output lasts as long as the speech (the still video is made that long anyway).
    // Only the options sync's SDK documents (GenerationOptions): output_format and a multipart outputFileName are not among them.
    form.append('options', JSON.stringify({ sync_mode: 'cut_off' }));
    if (webhookUrl) form.append('webhookUrl', webhookUrl);
    // Our attempt id is the key: a resend of this attempt (its answer lost) is the same generation, never a second one.
    const timeoutMs = opts.timeoutMs ?? uploadTimeoutMs(video.length + audio.bytes.length, CALL_TIMEOUT_MS);
    const g = await call('POST', '/v2/generate', form, signal, { submit: true, timeoutMs, headers: { 'idempotency-key': attemptId } }).catch(idempotencyAnswer);
    if (typeof g?.id !== 'string') throw new UpstreamError('unsent_unknown', 'sync answered the submit without a generation id');
    return { providerJobId: g.id, handle: { id: g.id } };
  }

  return {
    name: 'sync',
    kind: 'upstream',
    // sync's Idempotency-Key covers POST /v2/generate, JSON and multipart (sync.so/docs/api-reference/guides/idempotency).
    dedupesSubmit: (operation) => operation === 'talking-avatar',
    refuse(operation: GenerationOperation, params: Record<string, unknown>) {
      if (operation !== 'talking-avatar') return `${operation} is not served by the sync engine (it makes talking avatars with lipsync-2.0)`;
      if (!SYNC_MODELS[String(params.lipsync_model)]) return `lipsync_model: ${String(params.lipsync_model)} is not sync's; sync animates lipsync-2.0`;
      return undefined;
    },

    // Webhooks are asked for only when they can be checked.
    submit: (req, attempt, signal) => submit(req, attempt.id, opts.webhookSecret ? attempt.webhookUrl : undefined, signal),

    async poll(handle, signal): Promise<UpstreamStatus> {
      const g = (await call('GET', `/v2/generate/${encodeURIComponent(String(handle.id))}`, undefined, signal)) ?? {};
      const status = syncStatus(g);
      if (!status) throw new UpstreamError('transient', 'sync answered an unknown status');
      return status;
    },

    // GET /v2/generations filters by ids (sync.so/docs/api-reference/api/generate-api/list): up to
    // 100 of our generations in one read, newest first, so one page holds every one asked for.
    batchRead: {
      handles: {},
      size: LIST_LIMIT,
      async pollMany(handles, signal) {
        const ids = [...new Set(handles.map((h) => String(h.id)))].slice(0, LIST_LIMIT);
        // The answer is a bare list of generations.
        const { json: listed } = await request('GET', `/v2/generations?${new URLSearchParams({ ids: ids.join(','), limit: String(LIST_LIMIT) })}`, undefined, signal);
        const found = new Map<string, UpstreamStatus>();
        for (const g of Array.isArray(listed) ? (listed as Array<Record<string, unknown>>) : []) {
          const status = typeof g?.id === 'string' && ids.includes(g.id) ? syncStatus(g) : undefined;
          // A status sync does not document: the generation's own read decides.
          if (status) found.set(g.id as string, status);
        }
        return found;
      },
    },

    // sync's model names a route key may send work to: our lipsync model's, or every one we map.
    targets: (routeKey) => (routeKey === '*' || routeKey === 'talking-avatar' ? [...new Set(Object.values(SYNC_MODELS))] : SYNC_MODELS[routeKey] ? [SYNC_MODELS[routeKey]] : []),
    check: createSyncCheck({ baseUrl: opts.apiUrl, apiKey: opts.apiKey, dispatcher, timeoutMs: opts.timeoutMs ?? CALL_TIMEOUT_MS }),

    ...(opts.webhookSecret ? { verifyHook: verifier(opts.webhookSecret) } : {}),
  };
}

/** `Sync-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, fresh within 5 minutes. */
function verifier(secret: string) {
  return async (headers: Record<string, string | string[] | undefined>, rawBody: Buffer): Promise<{ providerJobId: string } | null> => {
    const header = headers['sync-signature'];
    const m = typeof header === 'string' ? /^t=(\d+),v1=([0-9a-f]+)$/i.exec(header.trim()) : null;
    if (!m) return null;
    const [, t, received] = m as unknown as [string, string, string];
    if (Math.abs(Date.now() / 1000 - Number(t)) > HOOK_TOLERANCE_SECONDS) return null;
    let payload: { id?: unknown };
    try {
      payload = JSON.parse(rawBody.toString('utf8')) as { id?: unknown };
    } catch {
      return null;
    }
    // sync's guide signs the JSON as JSON.stringify prints it; the raw body is accepted too.
    const ok = [rawBody.toString('utf8'), JSON.stringify(payload)].some((body) => {
      const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
      const got = Buffer.from(received.toLowerCase());
      return got.length === expected.length && timingSafeEqual(got, expected);
    });
    return ok && typeof payload.id === 'string' ? { providerJobId: payload.id } : null;
  };
}

