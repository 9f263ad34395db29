import { createHmac, timingSafeEqual } from 'node:crypto';
import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { stillVideo } from '../../media/still-video.ts';
import { probeMedia } from '../ffmpeg.ts';
import { createProviderClient, messageOrError } from '../upstream-http.ts';
import { UpstreamError, type UpstreamEngine, type UpstreamRequest, type UpstreamStatus } from '../upstream.ts';

/*
 * sync.so's API as synchronicity-labs/sync-typescript-sdk calls it (src/api/resources/generations/
 * client/Client.ts: POST /v2/generate as JSON or, with files, multipart `video` and `audio` files
 * plus `model`, `options`, `webhookUrl`; GET /v2/generate/{id}; common/types/Generation.ts: status
 * PENDING | PROCESSING | COMPLETED | FAILED, outputUrl, error, error_code; Model lipsync-2) and its
 * webhook guide (synchronicity-labs/docs-v2 api-reference/webhooks.mdx: `Sync-Signature: t=<unix>,v1=<hex>`,
 * HMAC-SHA256 with the webhook signing secret over `<t>.<JSON payload>`). Auth `x-api-key`.
 * sync animates a video, so a talking avatar's image becomes a still video of the speech's length.
 * No idempotency key: a submit whose answer is lost is not sent again.
 */
export interface SyncOptions {
  apiUrl: string;
  apiKey: string;
  /** The webhook signing secret (SYNC_WEBHOOK_SECRET); without it webhooks are neither asked for nor accepted. */
  webhookSecret?: string;
  allowPrivate: boolean;
  timeoutMs?: number;
}

const MAX_JSON_BYTES = 1024 * 1024;
// sync's upload takes up to 20 MB per file.
const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
const HOOK_TOLERANCE_SECONDS = 300;
/** Our lipsync_model to sync's model name. */
export const SYNC_MODELS: Readonly<Record<string, string>> = { 'lipsync-2.0': 'lipsync-2' };

export function createSyncEngine(opts: SyncOptions): UpstreamEngine {

  const { json: call } = createProviderClient({
    provider: 'sync',
    baseUrl: opts.apiUrl,
    allowPrivate: opts.allowPrivate,
    headers: { 'x-api-key': opts.apiKey, accept: 'application/json' },
    timeoutMs: opts.timeoutMs ?? 300_000,
    maxBytes: MAX_JSON_BYTES,
    message: messageOrError,
  });

  async function submit({ params, inputs, generationId }: UpstreamRequest, webhookUrl: string | undefined, signal: AbortSignal) {
    if (!inputs.face || !inputs.speech) throw new UpstreamError('refused', 'the talking avatar has no face or no speech');
    const audio = await inputs.speech.read(signal);
    const face = await inputs.face.read(signal);
    const seconds = (await probeMedia(audio.bytes)).durationSeconds ?? 1;
    const video = await stillVideo(face.bytes, seconds, signal);
    if (video.length > MAX_UPLOAD_BYTES || audio.bytes.length > MAX_UPLOAD_BYTES) throw new UpstreamError('refused', 'an input is larger than the 20 MB sync takes');
    const form = new FormData();
    form.append('model', SYNC_MODELS[String(params.lipsync_model)] ?? 'lipsync-2');
    form.append('video', new Blob([new Uint8Array(video)], { type: 'video/mp4' }), 'face.mp4');
    form.append('audio', new Blob([new Uint8Array(audio.bytes)], { type: audio.mime }), audio.mime === 'audio/mpeg' ? 'speech.mp3' : 'speech.wav');
    // cut_off: the output lasts as long as the speech (the still video is made that long anyway).
    form.append('options', JSON.stringify({ sync_mode: 'cut_off', output_format: 'mp4' }));
    form.append('outputFileName', `adforge-${generationId}`);
    if (webhookUrl) form.append('webhookUrl', webhookUrl);
    const g = await call('POST', '/v2/generate', form, signal, { submit: true });
    if (typeof g?.id !== 'string') throw new UpstreamError('unsent_unknown', 'sync answered the submit without a generation id');
    return { providerJobId: g.id, handle: { id: g.id } };
  }

  return {
    name: 'sync',
    kind: 'upstream',
    dedupesSubmit: () => false,
    refuse(operation: GenerationOperation, params: Record<string, unknown>) {
      if (operation !== 'talking-avatar') return `${operation} is not served by the sync engine (it makes talking avatars with lipsync-2.0)`;
      if (!SYNC_MODELS[String(params.lipsync_model)]) return `lipsync_model: ${String(params.lipsync_model)} is not sync's; sync animates lipsync-2.0`;
      return undefined;
    },

    // Webhooks are asked for only when they can be checked.
    submit: (req, attempt, signal) => submit(req, opts.webhookSecret ? attempt.webhookUrl : undefined, signal),

    async poll(handle, signal): Promise<UpstreamStatus> {
      const g = (await call('GET', `/v2/generate/${encodeURIComponent(String(handle.id))}`, undefined, signal)) ?? {};
      if (g.status === 'PENDING' || g.status === 'PROCESSING') return { state: 'pending', detail: String(g.status) };
      if (g.status === 'FAILED') return { state: 'failed', message: `sync could not make the video: ${typeof g.error === 'string' ? g.error.slice(0, 500) : 'failed'}` };
      if (g.status !== 'COMPLETED') throw new UpstreamError('transient', 'sync answered an unknown status');
      if (typeof g.outputUrl !== 'string') return { state: 'failed', message: 'sync finished without a video' };
      return { state: 'succeeded', outputs: [{ url: g.outputUrl }] };
    },

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

