import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { readBounded } from '../bounded-read.ts';
import { createProviderClient } from '../upstream-http.ts';
import { UpstreamError, type BatchRead, type Engine, type UpstreamRequest, type UpstreamStatus } from '../engine-contract.ts';
import { queued, running } from '../progress.ts';
import { faceAsset, speechAsset, type HeyGenAsset } from './heygen-assets.ts';
import { createHeyGenCheck } from './heygen-check.ts';
import { HEYGEN_ASSET_MAX_BYTES, HEYGEN_DEFAULT_LANGUAGES, HEYGEN_QUEUED_STATUSES, HEYGEN_WAITING_STATUSES, TALKING_AVATAR_FORMAT, heygenLanguage, heygenRefusal, heygenTargets, translationBody } from './heygen-map.ts';

/*
 * HeyGen's API as its contracts in test/contracts/heygen/ describe it (HeyGen's OpenAPI as
 * heygen-com/heygen-cli's gen/*.go carries it): `x-api-key`; answers {data: ...}; errors
 * {error: {code, message, param}}; POST /v3/assets (multipart `file`, png/jpeg/mp3/wav, 32 MB) ->
 * {asset_id}; POST /v3/videos -> {video_id}, GET /v3/videos/{id} -> pending (or waiting, the create's
 * word) | processing | completed (video_url) | failed (failure_message), GET
 * /v3/videos/statuses?video_ids= -> the status of up to 100 videos; POST /v3/video-translations ->
 * {video_translation_ids}, GET /v3/video-translations/{id} -> pending | running | completed
 * (video_url) | failed (failure_message). v3 mutations take an `Idempotency-Key` (1-255 of
 * [A-Za-z0-9_:.-], per endpoint; a repeat within 24 h replays the first answer, one arriving while
 * the first is in flight gets 409 request_in_progress): our attempt id, so an interrupted submit is
 * sent again safely. Face swap is the v1 workflow of heygen-com/skills-legacy
 * skills/faceswap/SKILL.md, which documents no such key: completed (output.video_url), failed
 * (error.message), not_found, and any other status still running.
 */
export interface HeyGenOptions {
  apiUrl: string;
  apiKey: string;
  /** Language code -> HeyGen language name, over the defaults (HEYGEN_LANGUAGES). */
  languages?: Readonly<Record<string, string>>;
  allowPrivate: boolean;
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on every call's own timeout. */
  callTimeoutCapMs?: number;
  /** One time limit for every call (tests); otherwise each call has HeyGen's own for its kind. */
  timeoutMs?: number;
}

const MAX_JSON_BYTES = 4 * 1024 * 1024;
// HeyGen's own client times its requests by kind (heygen-cli cmd/heygen/timeouts.go): a GET 30 s
// (server p99 under 2 s), a write 120 s (POST /v3/videos runs to a p99 of about 31 s), a multipart
// upload 10 minutes. A create cut by its limit has been sent: its outcome is unknown, and only the
// same Idempotency-Key may ask again.
const READ_TIMEOUT_MS = 30_000;
const WRITE_TIMEOUT_MS = 120_000;
const UPLOAD_TIMEOUT_MS = 600_000;
// GET /v3/videos/statuses: "statuses for up to 100 videos in one request" (heygen-cli gen/video.go VideoStatusesList).
const STATUSES_MAX_IDS = 100;

type Data = Record<string, unknown> | undefined;

export function createHeyGenEngine(opts: HeyGenOptions): Engine {
  const client = createProviderClient({
    provider: 'HeyGen',
    baseUrl: opts.apiUrl,
    allowPrivate: opts.allowPrivate,
    callTimeoutCapMs: opts.callTimeoutCapMs,
    headers: { 'x-api-key': opts.apiKey, accept: 'application/json' },
    timeoutMs: opts.timeoutMs ?? WRITE_TIMEOUT_MS,
    maxBytes: MAX_JSON_BYTES,
    message: heygenMessage,
    // 409 request_in_progress: the first request under this key is still running at HeyGen. It
    // may yet make the video: ask again under the same key for its answer, never under a new one.
    inProgress: (status) => status === 409,
  });
  const languages = { ...HEYGEN_DEFAULT_LANGUAGES, ...lowerKeys(opts.languages ?? {}) };

  const limit = (ms: number) => opts.timeoutMs ?? ms;
  const call = async (method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal, o: { submit?: boolean; key?: string } = {}): Promise<Data> => {
    const timeoutMs = limit(method === 'GET' ? READ_TIMEOUT_MS : body instanceof FormData ? UPLOAD_TIMEOUT_MS : WRITE_TIMEOUT_MS);
    const json = await client.json(method, path, body, signal, { timeoutMs, ...(o.submit ? { submit: true } : {}), ...(o.key ? { headers: { 'idempotency-key': o.key } } : {}) });
    return json?.data as Data;
  };

  /** Uploads an input as a HeyGen asset (under its own idempotency key) and answers its id. */
  async function upload(asset: HeyGenAsset, key: string, signal: AbortSignal): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(asset.bytes)], { type: asset.mime }), asset.filename);
    // An upload creates nothing billable; a lost answer is simply asked again under the same key.
    const data = await call('POST', '/v3/assets', form, signal, { key });
    if (typeof data?.asset_id !== 'string') throw new UpstreamError('transient', 'HeyGen answered the upload without an asset id');
    return data.asset_id;
  }

  async function talkingAvatar({ inputs, generationId }: UpstreamRequest, attemptId: string, callback: Record<string, string>, signal: AbortSignal) {
    if (!inputs.face || !inputs.speech) throw new UpstreamError('refused', 'the talking avatar has no face or no speech');
    // The speech goes inline: read up to HeyGen's asset limit, not past it.
    const speechRead = readBounded(inputs.speech, signal, HEYGEN_ASSET_MAX_BYTES, () => new UpstreamError('refused', 'the speech is larger than the 32 MB HeyGen takes'));
    // Both checked (and the face converted) before either is uploaded: a refusal leaves nothing at HeyGen.
    const [face, speech] = await Promise.all([inputs.face.read(signal).then((f) => faceAsset(f.bytes, f.mime)), speechRead.then((f) => speechAsset(f.bytes, f.mime))]);
    const image = await upload(face, `${attemptId}:face`, signal);
    const audio = await upload(speech, `${attemptId}:speech`, signal);
    const body = { type: 'image', image: { type: 'asset_id', asset_id: image }, audio_asset_id: audio, ...TALKING_AVATAR_FORMAT, title: `adforge ${generationId}`, ...callback };
    const data = await call('POST', '/v3/videos', body, signal, { submit: true, key: attemptId });
    if (typeof data?.video_id !== 'string') throw new UpstreamError('unsent_unknown', 'HeyGen answered the submit without a video id');
    return { providerJobId: data.video_id, handle: { kind: 'video', id: data.video_id } };
  }

  async function localize({ params, inputs, generationId }: UpstreamRequest, attemptId: string, callback: Record<string, string>, signal: AbortSignal) {
    const language = heygenLanguage(String(params.output_language), languages);
    if (!inputs.video || !language) throw new UpstreamError('refused', 'the video or the language is missing');
    const data = await call('POST', '/v3/video-translations', { ...translationBody(params, inputs.video.url, language, `adforge ${generationId}`), ...callback }, signal, { submit: true, key: attemptId });
    const id = Array.isArray(data?.video_translation_ids) ? data.video_translation_ids[0] : undefined;
    if (typeof id !== 'string') throw new UpstreamError('unsent_unknown', 'HeyGen answered the translation without an id');
    return { providerJobId: id, handle: { kind: 'translation', id } };
  }

  async function swap({ inputs }: UpstreamRequest, signal: AbortSignal) {
    if (!inputs.face || !inputs.video) throw new UpstreamError('refused', 'the face or the video is missing');
    const body = { workflow_type: 'FaceswapNode', input: { source_image_url: inputs.face.url, target_video_url: inputs.video.url } };
    const data = await call('POST', '/v1/workflows/executions', body, signal, { submit: true });
    if (typeof data?.execution_id !== 'string') throw new UpstreamError('unsent_unknown', 'HeyGen answered the face swap without an execution id');
    return { providerJobId: data.execution_id, handle: { kind: 'workflow', id: data.execution_id } };
  }

  /** Where each kind of job is read, and where its answer holds the result and the reason for a failure. */
  const JOBS: Record<string, { path: string; read: (d: Record<string, unknown>) => UpstreamStatus | undefined }> = {
    video: { path: '/v3/videos/', read: (d) => v3Status(d, HEYGEN_WAITING_STATUSES.video) },
    translation: { path: '/v3/video-translations/', read: (d) => v3Status(d, HEYGEN_WAITING_STATUSES.translation) },
    workflow: { path: '/v1/workflows/executions/', read: workflowStatus },
  };

  /**
   * Talking avatars read many at a time by id: GET /v3/videos/statuses takes up to 100 video ids
   * (heygen-cli gen/video.go VideoStatusesList) and answers each one's status, in one read. It names
   * no result URL and no failure message, so only the videos still waiting are answered from it;
   * one it shows ended (or not_found, or in a word HeyGen does not document) is read by its own GET.
   */
  const batchRead: BatchRead = {
    handles: { kind: 'video' },
    size: STATUSES_MAX_IDS,
    async pollMany(handles, signal) {
      const ids = [...new Set(handles.filter((h) => h.kind === 'video').map((h) => String(h.id)))].slice(0, STATUSES_MAX_IDS);
      const found = new Map<string, UpstreamStatus>();
      if (ids.length === 0) return found;
      const json = await client.json('GET', `/v3/videos/statuses?${new URLSearchParams({ video_ids: ids.join(',') })}`, undefined, signal, { timeoutMs: limit(READ_TIMEOUT_MS) });
      for (const d of Array.isArray(json?.data) ? (json.data as Array<Record<string, unknown>>) : []) {
        const id = typeof d?.video_id === 'string' ? d.video_id : undefined;
        const status = String(d?.status ?? '');
        if (id === undefined || !ids.includes(id) || !HEYGEN_WAITING_STATUSES.video.includes(status)) continue;
        found.set(id, { state: 'pending', detail: status, progress: HEYGEN_QUEUED_STATUSES.includes(status) ? queued() : running() });
      }
      return found;
    },
  };

  return {
    name: 'heygen',
    batchRead,
    kind: 'upstream',
    // The v3 mutations replay under our attempt id; the v1 face swap workflow does not.
    dedupesSubmit: (operation: GenerationOperation) => operation === 'talking-avatar' || operation === 'localize',
    refuse: (operation: GenerationOperation, params: Record<string, unknown>) => heygenRefusal(operation, params, languages),

    // POST /v3/videos and /v3/video-translations take callback_url and callback_id; the v1 face swap workflow does not.
    callsBack: (operation: GenerationOperation) => operation === 'talking-avatar' || operation === 'localize',

    async submit(req, attempt, signal) {
      // HeyGen posts to callback_url when the job ends; what it sends is not signed in anything we read, so the URL holds the attempt's own token.
      const callback: Record<string, string> = attempt.webhookUrl ? { callback_url: attempt.webhookUrl, callback_id: attempt.id } : {};
      if (req.operation === 'talking-avatar') return talkingAvatar(req, attempt.id, callback, signal);
      if (req.operation === 'localize') return localize(req, attempt.id, callback, signal);
      if (req.operation === 'swap-avatar') return swap(req, signal);
      throw new UpstreamError('refused', `HeyGen does not make ${req.operation}`);
    },

    async poll(handle, signal): Promise<UpstreamStatus> {
      const job = JOBS[String(handle.kind)];
      if (!job) return { state: 'failed', message: 'unknown HeyGen job' };
      const d = (await call('GET', `${job.path}${encodeURIComponent(String(handle.id))}`, undefined, signal)) ?? {};
      const status = job.read(d);
      if (!status) throw new UpstreamError('transient', `HeyGen answered a status its API does not document: ${String(d.status).slice(0, 40)}`);
      return status;
    },

    targets: (routeKey) => heygenTargets(routeKey, languages),
    check: createHeyGenCheck({ baseUrl: opts.apiUrl, apiKey: opts.apiKey, dispatcher: client.dispatcher, timeoutMs: limit(READ_TIMEOUT_MS) }),
  };
}

const failedWith = (reason: unknown): UpstreamStatus => ({ state: 'failed', message: `HeyGen could not make the video: ${typeof reason === 'string' && reason ? reason.slice(0, 500) : 'failed'}` });
const succeededWith = (url: unknown): UpstreamStatus => (typeof url === 'string' ? { state: 'succeeded', outputs: [{ url }] } : { state: 'failed', message: 'HeyGen finished without a video' });

/** GET /v3/videos/{id} and GET /v3/video-translations/{id}: undefined for a status neither documents. */
function v3Status(d: Record<string, unknown>, waiting: readonly string[]): UpstreamStatus | undefined {
  const status = String(d.status ?? '');
  if (status === 'completed') return succeededWith(d.video_url);
  if (status === 'failed') return failedWith(d.failure_message ?? d.failure_code);
  // HeyGen gives states only: its queued words wait for a worker; `processing` (videos), `running` (translations) run.
  if (waiting.includes(status)) return { state: 'pending', detail: status, progress: HEYGEN_QUEUED_STATUSES.includes(status) ? queued() : running() };
  return undefined;
}

/** GET /v1/workflows/executions/{id}: as HeyGen's own poller reads it, any other status is still running. */
function workflowStatus(d: Record<string, unknown>): UpstreamStatus {
  const status = String(d.status ?? '');
  if (status === 'completed') return succeededWith((d.output as { video_url?: unknown } | undefined)?.video_url);
  if (status === 'failed') return failedWith((d.error as { message?: unknown } | undefined)?.message);
  if (status === 'not_found') return { state: 'failed', message: 'HeyGen has no such face swap (not_found)' };
  return { state: 'pending', detail: status, progress: running(status.slice(0, 60)) };
}

function lowerKeys(o: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k.toLowerCase(), v]));
}

/** HeyGen's error text: {error: {message}} (v3) or {message} / {error: "..."} (v1). */
function heygenMessage(json: unknown): string | undefined {
  const j = json as { error?: { message?: unknown } | string; message?: unknown } | undefined;
  const m = typeof j?.error === 'string' ? j.error : typeof j?.error?.message === 'string' ? j.error.message : j?.message;
  return typeof m === 'string' ? m.slice(0, 500) : undefined;
}
