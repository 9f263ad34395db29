import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { createProviderClient } from '../upstream-http.ts';
import { UpstreamError, type UpstreamEngine, type UpstreamFile, type UpstreamRequest, type UpstreamStatus } from '../upstream.ts';
import { HEYGEN_DEFAULT_LANGUAGES, TALKING_AVATAR_FORMAT, heygenLanguage, heygenRefusal, translationBody } from './heygen-map.ts';

/*
 * HeyGen's API as heygen-com/heygen-cli calls it (gen/asset.go, gen/video.go, gen/video-translate.go,
 * generated from HeyGen's OpenAPI at developers.heygen.com): `x-api-key`; answers {data: ...};
 * POST /v3/assets (multipart `file`) -> {asset_id}; POST /v3/videos -> {video_id}, GET
 * /v3/videos/{id} -> status pending | processing | completed | failed with video_url or
 * failure_message; POST /v3/video-translations -> {video_translation_ids}, GET
 * /v3/video-translations/{id} -> pending | running | completed | failed. v3 mutations take an
 * `Idempotency-Key` (1-255 of [A-Za-z0-9_:.-]; a repeat within 24 h replays the first answer, one
 * arriving while the first is in flight gets 409 request_in_progress): our attempt id, so an
 * interrupted submit is sent again safely. Face swap is the v1 workflow of
 * heygen-com/skills-legacy skills/faceswap/SKILL.md, which takes no such key.
 */
export interface HeyGenOptions {
  apiUrl: string;
  apiKey: string;
  /** Language code -> HeyGen language name, over the defaults (HEYGEN_LANGUAGES). */
  languages?: Readonly<Record<string, string>>;
  allowPrivate: boolean;
  timeoutMs?: number;
}

const MAX_JSON_BYTES = 4 * 1024 * 1024;
// HeyGen's asset upload takes up to 32 MB through the API.
const MAX_ASSET_BYTES = 32 * 1024 * 1024;
// 409 request_in_progress: the first request with this key is still running; nothing new was queued.
const NOTHING_QUEUED = new Set([409]);

type Data = Record<string, unknown> | undefined;

export function createHeyGenEngine(opts: HeyGenOptions): UpstreamEngine {
  const client = createProviderClient({
    provider: 'HeyGen',
    baseUrl: opts.apiUrl,
    allowPrivate: opts.allowPrivate,
    headers: { 'x-api-key': opts.apiKey, accept: 'application/json' },
    timeoutMs: opts.timeoutMs ?? 120_000,
    maxBytes: MAX_JSON_BYTES,
    message: heygenMessage,
    safeToResend: NOTHING_QUEUED,
  });
  const languages = { ...HEYGEN_DEFAULT_LANGUAGES, ...lowerKeys(opts.languages ?? {}) };

  const call = async (method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal, o: { submit?: boolean; key?: string } = {}): Promise<Data> => {
    const json = await client.json(method, path, body, signal, { ...(o.submit ? { submit: true } : {}), ...(o.key ? { headers: { 'idempotency-key': o.key } } : {}) });
    return json?.data as Data;
  };

  /** Uploads an input as a HeyGen asset (under its own idempotency key) and answers its id. */
  async function upload(file: UpstreamFile, name: string, key: string, signal: AbortSignal): Promise<string> {
    const { bytes, mime } = await file.read(signal);
    if (bytes.length > MAX_ASSET_BYTES) throw new UpstreamError('refused', `the ${name} is larger than the 32 MB HeyGen takes`);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(bytes)], { type: mime }), name);
    // An upload creates nothing billable; a lost answer is simply asked again under the same key.
    const data = await call('POST', '/v3/assets', form, signal, { key });
    if (typeof data?.asset_id !== 'string') throw new UpstreamError('transient', 'HeyGen answered the upload without an asset id');
    return data.asset_id;
  }

  async function talkingAvatar({ inputs, generationId }: UpstreamRequest, attemptId: string, signal: AbortSignal) {
    if (!inputs.face || !inputs.speech) throw new UpstreamError('refused', 'the talking avatar has no face or no speech');
    const image = await upload(inputs.face, 'face', `${attemptId}:face`, signal);
    const audio = await upload(inputs.speech, 'speech', `${attemptId}:speech`, signal);
    const body = { type: 'image', image: { type: 'asset_id', asset_id: image }, audio_asset_id: audio, ...TALKING_AVATAR_FORMAT, title: `adforge ${generationId}` };
    const data = await call('POST', '/v3/videos', body, signal, { submit: true, key: attemptId });
    if (typeof data?.video_id !== 'string') throw new UpstreamError('unsent_unknown', 'HeyGen answered the submit without a video id');
    return { providerJobId: data.video_id, handle: { kind: 'video', id: data.video_id } };
  }

  async function localize({ params, inputs, generationId }: UpstreamRequest, attemptId: string, signal: AbortSignal) {
    const language = heygenLanguage(String(params.output_language), languages);
    if (!inputs.video || !language) throw new UpstreamError('refused', 'the video or the language is missing');
    const data = await call('POST', '/v3/video-translations', translationBody(params, inputs.video.url, language, `adforge ${generationId}`), signal, { submit: true, key: attemptId });
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

  const STATUS_PATHS: Record<string, string> = { video: '/v3/videos/', translation: '/v3/video-translations/', workflow: '/v1/workflows/executions/' };

  return {
    name: 'heygen',
    kind: 'upstream',
    // The v3 mutations replay under our attempt id; the v1 face swap workflow does not.
    dedupesSubmit: (operation: GenerationOperation) => operation === 'talking-avatar' || operation === 'localize',
    refuse: (operation: GenerationOperation, params: Record<string, unknown>) => heygenRefusal(operation, params, languages),

    async submit(req, attempt, signal) {
      if (req.operation === 'talking-avatar') return talkingAvatar(req, attempt.id, signal);
      if (req.operation === 'localize') return localize(req, attempt.id, signal);
      if (req.operation === 'swap-avatar') return swap(req, signal);
      throw new UpstreamError('refused', `HeyGen does not make ${req.operation}`);
    },

    async poll(handle, signal): Promise<UpstreamStatus> {
      const path = STATUS_PATHS[String(handle.kind)];
      if (!path) return { state: 'failed', message: 'unknown HeyGen job' };
      const d = (await call('GET', `${path}${encodeURIComponent(String(handle.id))}`, undefined, signal)) ?? {};
      const status = String(d.status ?? '');
      if (status === 'failed') {
        const reason = (d.error as { message?: unknown } | undefined)?.message ?? d.failure_message;
        return { state: 'failed', message: `HeyGen could not make the video: ${typeof reason === 'string' ? reason.slice(0, 500) : 'failed'}` };
      }
      if (status !== 'completed') {
        if (['pending', 'processing', 'running', 'waiting', 'submitted', 'in_progress'].includes(status)) return { state: 'pending', detail: status };
        throw new UpstreamError('transient', 'HeyGen answered an unknown status');
      }
      const output = d.output as { video_url?: unknown; video?: { video_url?: unknown } } | undefined;
      const url = d.video_url ?? output?.video_url ?? output?.video?.video_url;
      if (typeof url !== 'string') return { state: 'failed', message: 'HeyGen finished without a video' };
      return { state: 'succeeded', outputs: [{ url }] };
    },
  };
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
