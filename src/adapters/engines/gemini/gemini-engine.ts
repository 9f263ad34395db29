import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { createProviderClient, errorMessage } from '../upstream-http.ts';
import { UpstreamError, attachedImages, type Engine, type UpstreamFile, type UpstreamOutput, type UpstreamRequest, type UpstreamStatus } from '../engine-contract.ts';
import { running } from '../progress.ts';
import { checkGemini, geminiTargets } from './gemini-check.ts';
import { googleRetryDelayMs, isKeyRefused } from './gemini-errors.ts';
import { openVideoFile } from './video-file.ts';
import { withoutSound } from './without-sound.ts';
import { GEMINI_DEFAULT_IMAGE_MODELS, GEMINI_VIDEO_MODELS, geminiRefusal, imageLimitsOf, imageSizeOf } from './gemini-map.ts';

/*
 * The Gemini API (generativelanguage.googleapis.com/v1beta) as googleapis/js-genai calls it:
 * `x-goog-api-key`; Veo through models/{model}:predictLongRunning, an operation polled at
 * GET /{operation name} until `done`, its video at response.generateVideoResponse.generatedSamples[].video.uri
 * (read with the key, following Google's redirect to the bytes: video-file.ts; kept about two days)
 * or filtered with raiMediaFilteredReasons; images
 * through models/{model}:generateContent, answered with inlineData. Errors {error: {code, message,
 * status}} (a bad key is 400 API_KEY_INVALID). No idempotency key: a Veo submit or an image call
 * whose answer is lost is not sent again (an image call answers with the image it made, and bills
 * it). Contracts: test/contracts/gemini/.
 */
export interface GeminiOptions {
  apiUrl: string;
  apiKey: string;
  imageModels?: Readonly<Record<string, string>>;
  allowPrivate: boolean;
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on every call's own timeout. */
  callTimeoutCapMs?: number;
  timeoutMs?: number;
  /**
   * How long we wait for one image call (GEMINI_IMAGE_TIMEOUT_SECONDS); Google is told a deadline a
   * little shorter, so that its own answer past it comes first.
   */
  imageTimeoutMs?: number;
}

const MAX_JSON_BYTES = 64 * 1024 * 1024;
const MAX_VIDEO_BYTES = 500 * 1024 * 1024;
// The Gemini API takes a request of up to 20 MB; one image must leave room for the rest.
const MAX_INLINE_BYTES = 15 * 1024 * 1024;
/*
 * One image call's deadline. Google publishes no latency for its image models, and its SDK sets no
 * client timeout, leaving the end to the server; given one, it tells the server as X-Server-Timeout
 * (googleapis/js-genai src/_api_client.ts). We name ours the same way: past it Google ends the call
 * with 504 DEADLINE_EXCEEDED (its troubleshooting page), a failed request it does not charge (its
 * billing FAQ), so a slow image is a known failure that may be made again, not an unknown outcome.
 * Five minutes for Google, 30 s more for its answer: a Pro image at 4K with references is the
 * slowest we send.
 */
const IMAGE_TIMEOUT_MS = 330_000;
// Google's deadline: our wait less the time its 504 takes to reach us (a sixth, at least 1 s, at most 30 s); only a call still unanswered then is an unknown outcome.
const serverDeadlineS = (waitMs: number) => Math.max(1, Math.floor((waitMs - Math.min(30_000, Math.max(1_000, Math.ceil(waitMs / 6)))) / 1000));

export function createGeminiEngine(opts: GeminiOptions): Engine {
  const origin = new URL(opts.apiUrl).origin;
  const imageModels = { ...GEMINI_DEFAULT_IMAGE_MODELS, ...(opts.imageModels ?? {}) };
  const { call, dispatcher } = createProviderClient({
    provider: 'Gemini',
    baseUrl: opts.apiUrl,
    allowPrivate: opts.allowPrivate,
    callTimeoutCapMs: opts.callTimeoutCapMs,
    headers: { 'x-goog-api-key': opts.apiKey },
    timeoutMs: opts.timeoutMs ?? 300_000,
    maxBytes: MAX_JSON_BYTES,
    maxBinaryBytes: MAX_VIDEO_BYTES,
    message: errorMessage,
    // Google refuses a bad key with 400 API_KEY_INVALID: the operator's to fix, not the request's.
    keyRefused: isKeyRefused,
    // A 429 gives its wait in RetryInfo.retryDelay: it pauses every read of Gemini that long.
    retryAfterInBody: googleRetryDelayMs,
  });

  const imageWaitMs = Math.min(opts.imageTimeoutMs ?? IMAGE_TIMEOUT_MS, opts.callTimeoutCapMs ?? Infinity);
  // Image calls: synchronous, one image each, billed once Google made it (a submit in all but name).
  const imageApi = createProviderClient({
    provider: 'Gemini',
    baseUrl: opts.apiUrl,
    allowPrivate: opts.allowPrivate,
    headers: { 'x-goog-api-key': opts.apiKey, 'x-server-timeout': String(serverDeadlineS(imageWaitMs)) },
    timeoutMs: imageWaitMs,
    maxBytes: MAX_JSON_BYTES,
    message: errorMessage,
    keyRefused: isKeyRefused,
    retryAfterInBody: googleRetryDelayMs,
    // Google's 5xx is a failed request, not charged (its billing FAQ): no image exists to pay twice for.
    safeToResend: new Set([500, 502, 503, 504]),
  });

  /** An input image as inline bytes (the Gemini API takes no URLs). */
  async function inline(image: UpstreamFile, signal: AbortSignal): Promise<{ data: string; mimeType: string }> {
    const { bytes, mime } = await image.read(signal);
    if (bytes.length > MAX_INLINE_BYTES) throw new UpstreamError('refused', `an input image is larger than the ${MAX_INLINE_BYTES >> 20} MB Gemini takes inline`);
    return { data: bytes.toString('base64'), mimeType: mime.startsWith('image/') ? mime : 'image/png' };
  }
  const veoImage = async (image: UpstreamFile, signal: AbortSignal) => {
    const { data, mimeType } = await inline(image, signal);
    return { bytesBase64Encoded: data, mimeType };
  };

  async function submitVideo({ params: p, inputs }: UpstreamRequest, signal: AbortSignal) {
    const model = GEMINI_VIDEO_MODELS[String(p.model)]!;
    const instance: Record<string, unknown> = { prompt: inputs.prompt };
    if (inputs.firstFrame) instance.image = await veoImage(inputs.firstFrame, signal);
    if (inputs.lastFrame) instance.lastFrame = await veoImage(inputs.lastFrame, signal);
    // Veo takes no brand or product images (the spec attaches those to Seedance and Kling O3 only).
    if (inputs.references.length) instance.referenceImages = await Promise.all(inputs.references.map(async (r) => ({ image: await veoImage(r, signal), referenceType: 'asset' })));
    const body = { instances: [instance], parameters: { aspectRatio: p.aspect_ratio, durationSeconds: Number(p.duration), resolution: p.resolution, sampleCount: 1 } };
    const { json } = await call('POST', `/models/${model}:predictLongRunning`, body, signal, { submit: true });
    const name = (json as { name?: unknown } | undefined)?.name;
    if (typeof name !== 'string' || !/^[\w./-]+$/.test(name)) throw new UpstreamError('unsent_unknown', 'Gemini answered the submit without an operation name');
    return { providerJobId: name, handle: { kind: 'video', operation: name, sound: Boolean(p.generate_audio) } };
  }

  /**
   * One call per image, `quantity` (what is still to make) of them. Each image is handed to `keep`
   * as soon as it arrives (Google billed it): a later call's failure then loses none.
   */
  async function makeImages({ params: p, inputs }: UpstreamRequest, signal: AbortSignal, keep?: (output: UpstreamOutput) => Promise<void>): Promise<UpstreamStatus> {
    const model = imageModels[String(p.model)]!;
    const outputs: UpstreamOutput[] = [];
    // An edit, product shot or branded image sends its images inline after the prompt that names them.
    const images = await Promise.all(attachedImages(inputs).map(async (image) => ({ inlineData: await inline(image, signal) })));
    for (let i = 0; i < Number(p.quantity ?? 1); i++) {
      const body = {
        contents: [{ parts: [{ text: inputs.prompt }, ...images] }],
        // A model that takes no imageSize (gemini-2.5-flash-image) makes 1K images and is sent none.
        generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: p.aspect_ratio, ...(imageLimitsOf(model).sizes ? { imageSize: imageSizeOf(p.resolution) } : {}) } },
      };
      const { json } = await imageApi.call('POST', `/models/${model}:generateContent`, body, signal, { submit: true });
      const r = json as { promptFeedback?: { blockReason?: unknown }; candidates?: Array<{ finishReason?: unknown; content?: { parts?: Array<{ inlineData?: { data?: unknown } }> } }> } | undefined;
      if (r?.promptFeedback?.blockReason) return { state: 'failed', message: `Gemini refused the request: blocked (${String(r.promptFeedback.blockReason)})` };
      const data = r?.candidates?.[0]?.content?.parts?.find((part) => typeof part.inlineData?.data === 'string')?.inlineData?.data;
      if (typeof data !== 'string') return { state: 'failed', message: `Gemini made no image (${String(r?.candidates?.[0]?.finishReason ?? 'no candidate')})` };
      const image = { bytes: Buffer.from(data, 'base64') };
      if (keep) await keep(image);
      else outputs.push(image);
    }
    return { state: 'succeeded', outputs };
  }

  return {
    name: 'gemini',
    kind: 'upstream',
    dedupesSubmit: () => false,
    refuse: (operation: GenerationOperation, params: Record<string, unknown>) => geminiRefusal(operation, params, imageModels),
    targets: (routeKey: string) => geminiTargets(routeKey, imageModels),
    check: (targets, signal) => checkGemini({ apiUrl: opts.apiUrl, apiKey: opts.apiKey, dispatcher }, targets, signal),

    async submit(req: UpstreamRequest, attempt, signal) {
      if (req.operation === 'ai-video') return submitVideo(req, signal);
      const done = await makeImages(req, signal, attempt.keep);
      return { providerJobId: `images-${req.generationId}`, handle: { kind: 'image' }, done };
    },

    async poll(handle, signal): Promise<UpstreamStatus> {
      if (handle.kind !== 'video') return { state: 'failed', message: 'the Gemini images could not be stored and cannot be fetched again' };
      const { json } = await call('GET', `/${String(handle.operation)}`, undefined, signal);
      const op = json as {
        done?: unknown;
        error?: { message?: unknown };
        response?: { generateVideoResponse?: { generatedSamples?: Array<{ video?: { uri?: unknown } }>; raiMediaFilteredReasons?: unknown[] } };
      } | undefined;
      // A long-running operation says only whether it is done.
      if (!op?.done) return { state: 'pending', progress: running() };
      if (op.error) return { state: 'failed', message: `Gemini could not make the video: ${typeof op.error.message === 'string' ? op.error.message.slice(0, 500) : 'failed'}` };
      const res = op.response?.generateVideoResponse;
      const uri = res?.generatedSamples?.[0]?.video?.uri;
      if (typeof uri !== 'string') {
        const reasons = (res?.raiMediaFilteredReasons ?? []).map(String).join('; ');
        return { state: 'failed', message: `Gemini refused the request: ${reasons || 'no video was made'}` };
      }
      const sound = Boolean(handle.sound);
      return {
        state: 'succeeded',
        outputs: [
          {
            open: async (s) => {
              // The file URI redirects to the bytes; the key goes only to the API's own origin.
              const video = await openVideoFile(uri, { call, apiOrigin: origin, maxBytes: MAX_VIDEO_BYTES, allowPrivate: opts.allowPrivate, timeoutMs: 300_000 }, s);
              if (sound) return video;
              // Veo on the Gemini API always makes sound: a request without it gets the picture alone.
              return withoutSound(video, s);
            },
          },
        ],
      };
    },
  };
}
