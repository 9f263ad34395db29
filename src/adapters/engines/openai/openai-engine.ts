import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { fitFrame } from '../../media/fit-frame.ts';
import { createProviderClient, errorMessage } from '../upstream-http.ts';
import { UpstreamError, attachedImages, type Engine, type UpstreamFile, type UpstreamRequest, type UpstreamStatus } from '../engine-contract.ts';
import { fractionOf, queued, running } from '../progress.ts';
import { createOpenAiCheck, openaiTargets } from './openai-check.ts';
import { editImage } from './openai-images.ts';
import { OPENAI_DEFAULT_IMAGE_MODELS, imageFields, openaiRefusal, soraSize, videosRetiredNote } from './openai-map.ts';

/*
 * The OpenAI API as its OpenAPI document (openai/openai-openapi) and SDK (openai/openai-node
 * src/resources/videos.ts, images.ts) describe it; the stored contracts are test/contracts/openai/.
 * Videos: create as multipart with `input_reference` as an image file, retrieve with status
 * queued | in_progress | completed | failed and `error {code, message}`, content at
 * GET /videos/{id}/content. OpenAI shut the Videos (Sora) API down on 2026-09-24: its lifecycle
 * table (openai-lifecycle.ts) marks sora-2 and sora-2-pro retired (the start refuses a route to
 * them); the engine keeps the code path for an account OpenAI still serves. Images: generations (JSON) and edits (multipart, the
 * images as `image[]` files), answered with b64_json. Auth `Authorization: Bearer <key>`; errors
 * `{error: {message, type, param, code}}`; 429 with retry-after. No idempotency key: a video submit,
 * or an image call, whose answer is lost is not sent again (the SDK resends both: see IMAGE_TIMEOUT_MS).
 */
export interface OpenAiOptions {
  baseUrl: string;
  apiKey: string;
  /** Our image model names to OpenAI's (OPENAI_IMAGE_MODELS). */
  imageModels?: Readonly<Record<string, string>>;
  allowPrivate: boolean;
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on every call's own timeout. */
  callTimeoutCapMs?: number;
  timeoutMs?: number;
  /** How long one Images call may take (OPENAI_IMAGE_TIMEOUT_SECONDS). */
  imageTimeoutMs?: number;
}

const MAX_JSON_BYTES = 64 * 1024 * 1024; // image answers carry base64 images
const MAX_VIDEO_BYTES = 500 * 1024 * 1024;
/*
 * An Images call answers with the images once they are made, and OpenAI goes on making (and
 * billing) them when the client goes away: a short timeout only pays for images nobody receives.
 * Ten minutes, the SDK's own wait for one request (openai-node src/client.ts, DEFAULT_TIMEOUT). The
 * SDK then resends a request that timed out, lost its connection or got a 5xx (shouldRetry), with no
 * idempotency key: each resend may make and bill the images again, so we do not follow it there.
 */
const IMAGE_TIMEOUT_MS = 600_000;

export function createOpenAiEngine(opts: OpenAiOptions): Engine {
  const imageModels = { ...OPENAI_DEFAULT_IMAGE_MODELS, ...(opts.imageModels ?? {}) };
  const { call, dispatcher } = createProviderClient({
    provider: 'OpenAI',
    baseUrl: opts.baseUrl,
    allowPrivate: opts.allowPrivate,
    callTimeoutCapMs: opts.callTimeoutCapMs,
    headers: { authorization: `Bearer ${opts.apiKey}` },
    timeoutMs: opts.timeoutMs ?? 300_000,
    maxBytes: MAX_JSON_BYTES,
    maxBinaryBytes: MAX_VIDEO_BYTES,
    message: errorMessage,
  });

  const imageApi = createProviderClient({
    provider: 'OpenAI',
    baseUrl: opts.baseUrl,
    allowPrivate: opts.allowPrivate,
    callTimeoutCapMs: opts.callTimeoutCapMs,
    headers: { authorization: `Bearer ${opts.apiKey}` },
    timeoutMs: opts.imageTimeoutMs ?? IMAGE_TIMEOUT_MS,
    maxBytes: MAX_JSON_BYTES,
    message: errorMessage,
  });

  /** The edit request: the fields and each input image as an `image[]` file (a type OpenAI takes), in the order the prompt names them. */
  async function editForm(fields: Record<string, string | number>, images: UpstreamFile[], signal: AbortSignal): Promise<FormData> {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, String(v));
    for (const [i, image] of images.entries()) {
      const { bytes, type } = await editImage((await image.read(signal)).bytes);
      form.append('image[]', new Blob([new Uint8Array(bytes)], { type }), `image-${i + 1}.${type.slice(6).replace('jpeg', 'jpg')}`);
    }
    return form;
  }

  /** The Videos API create, multipart like the SDK's; a reference image is the first frame, fitted to the size asked. */
  async function videoForm({ params: p, inputs }: UpstreamRequest, signal: AbortSignal): Promise<FormData> {
    const size = soraSize(p);
    const form = new FormData();
    for (const [k, v] of Object.entries({ model: String(p.model), prompt: inputs.prompt, seconds: String(p.duration), size })) form.append(k, v);
    const reference = inputs.references[0];
    if (reference) {
      const [w, h] = size.split('x').map(Number) as [number, number];
      const frame = await fitFrame((await reference.read(signal)).bytes, w, h);
      if (!frame) throw new UpstreamError('refused', 'the reference image could not be read as an image');
      form.append('input_reference', new Blob([new Uint8Array(frame)], { type: 'image/png' }), 'reference.png');
    }
    return form;
  }

  return {
    name: 'openai',
    kind: 'upstream',
    dedupesSubmit: () => false,

    refuse: (operation: GenerationOperation, params: Record<string, unknown>) => openaiRefusal(operation, params, imageModels),
    targets: (routeKey: string) => openaiTargets(routeKey, imageModels),
    check: createOpenAiCheck({ baseUrl: opts.baseUrl, apiKey: opts.apiKey, dispatcher }),

    async submit(req: UpstreamRequest, _attempt, signal) {
      const p = req.params;
      if (req.operation === 'ai-video') {
        const { json } = await call('POST', '/videos', await videoForm(req, signal), signal, { submit: true }).catch((e: unknown) => {
          // A refusal of the create is most likely the shutdown itself: say so beside OpenAI's words.
          throw e instanceof UpstreamError && e.failure === 'refused' ? new UpstreamError('refused', `${e.message} (${videosRetiredNote()})`, { cause: e }) : e;
        });
        const id = (json as { id?: unknown } | undefined)?.id;
        if (typeof id !== 'string' || !id) throw new UpstreamError('unsent_unknown', 'OpenAI answered the submit without a video id');
        return { providerJobId: id, handle: { kind: 'video', id } };
      }
      // Images answer with the images once made: a lost answer (a timeout, a reset, a 5xx) may have
      // made and billed them, and nothing can tell; it is an unknown outcome, never sent again.
      const fields = imageFields(p, req.inputs.prompt, imageModels);
      const inputImages = attachedImages(req.inputs);
      const { json } = inputImages.length
        ? await imageApi.call('POST', '/images/edits', await editForm(fields, inputImages, signal), signal, { submit: true })
        : await imageApi.call('POST', '/images/generations', fields, signal, { submit: true });
      const data = (json as { data?: Array<{ b64_json?: unknown }>; created?: unknown } | undefined)?.data ?? [];
      const images: Buffer[] = [];
      for (const d of data) if (typeof d.b64_json === 'string') images.push(Buffer.from(d.b64_json, 'base64'));
      const done: UpstreamStatus = images.length ? { state: 'succeeded', outputs: images.map((bytes) => ({ bytes })) } : { state: 'failed', message: 'OpenAI answered without an image' };
      return { providerJobId: `images-${String((json as { created?: unknown } | undefined)?.created ?? Date.now())}`, handle: { kind: 'image' }, done };
    },

    async poll(handle, signal): Promise<UpstreamStatus> {
      if (handle.kind !== 'video') return { state: 'failed', message: 'the OpenAI images could not be stored and cannot be fetched again' };
      const id = encodeURIComponent(String(handle.id));
      const { json } = await call('GET', `/videos/${id}`, undefined, signal);
      const v = json as { status?: unknown; progress?: unknown; error?: { message?: unknown } | null } | undefined;
      // `progress`: OpenAI's approximate completion percentage, 0 to 100 (openai-node's Video).
      if (v?.status === 'queued') return { state: 'pending', detail: `${String(v.status)} ${String(v.progress ?? 0)}%`, progress: queued() };
      if (v?.status === 'in_progress') {
        return { state: 'pending', detail: `${String(v.status)} ${String(v.progress ?? 0)}%`, progress: running(undefined, fractionOf(v.progress, 100)) };
      }
      if (v?.status === 'failed') return { state: 'failed', message: `OpenAI could not make the video: ${typeof v.error?.message === 'string' ? v.error.message.slice(0, 500) : 'failed'}` };
      if (v?.status !== 'completed') throw new UpstreamError('transient', 'OpenAI answered an unknown status');
      return { state: 'succeeded', outputs: [{ open: async (s) => (await call('GET', `/videos/${id}/content`, undefined, s, { binary: true, stream: true })).body! }] };
    },
  };
}
