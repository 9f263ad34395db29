import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { createProviderClient, ProviderAnswerError } from '../upstream-http.ts';
import { UpstreamError, attachedImages, type Engine, type UpstreamRequest, type UpstreamStatus } from '../engine-contract.ts';
import { queued, running } from '../progress.ts';
import { createFalCheck, falTargets } from './fal-check.ts';
import { createFalHookVerifier } from './webhook.ts';
import { FAL_MODELS, falInput, falRefusal, type FalModel } from './fal-models.ts';

/*
 * fal.ai's queue API, as its client implements it: fal-ai/fal-js libs/client/src/queue.ts
 * (submit: POST {queue}/{endpoint id}[?fal_webhook=URL] answering {request_id, status_url,
 * response_url, cancel_url}; status: GET {queue}/{owner}/{app}/requests/{id}/status with
 * IN_QUEUE / IN_PROGRESS / COMPLETED; result: GET {queue}/{owner}/{app}/requests/{id}; cancel:
 * PUT .../requests/{id}/cancel), libs/client/src/response.ts (errors: JSON with `detail`, 422 for
 * invalid input) and libs/client/src/types/common.ts. Auth: `Authorization: Key <FAL_KEY>`.
 * fal has no idempotency key: a submit whose answer is lost cannot be sent again safely. fal's own
 * clients resend a submit on any lost answer (retry.ts, fal_client client.py _maybe_retry_request):
 * adforge does not, since the queue may hold (and bill) the first one.
 */

export interface FalOptions {
  queueUrl: string;
  /** fal's Platform API (model search, for the free check); https://api.fal.ai/v1 by default. */
  apiUrl?: string;
  /** fal's published webhook keys (JWKS, Ed25519). */
  jwksUrl?: string;
  apiKey: string;
  /** Endpoint ids per model and input kind, defaults in fal-models.ts, overridable by FAL_MODEL_ENDPOINTS. */
  endpoints?: Readonly<Record<string, string>>;
  allowPrivate: boolean;
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on every call's own timeout. */
  callTimeoutCapMs?: number;
  /** One time limit for every call (tests); otherwise fal's own client's. */
  timeoutMs?: number;
}

const MAX_JSON_BYTES = 1024 * 1024;
// fal's Python client gives every call 120 s, its submit included (fal-ai/fal projects/fal_client
// client.py: default_timeout 120.0, QUEUE_POLL_TIMEOUT for status and result reads); its JS client
// sets none. The queue answers a submit once the job is stored, but a submit cut after sending
// leaves the job unconfirmed (and paid): the limit is fal's own, not a shorter one of ours.
const CALL_TIMEOUT_MS = 120_000;
// A 429 queued nothing: both of fal's clients resend a submit on it (fal-js retry.ts
// DEFAULT_RETRYABLE_STATUS_CODES; fal_client RETRY_CODES).
const SUBMIT_RETRYABLE = new Set([429]);
// A timeout or a conflict answered to a submit proves nothing: fal may hold the job (and bill it).
// Not sent again; the generation fails and is refunded, as after a 5xx.
const SUBMIT_UNKNOWN = new Set([408, 409]);
// 502, 503 and 504 queued nothing only when the front server answered them, before fal's own
// server saw the request: fal_client resends them only then (_is_ingress_error: no
// x-fal-request-id, which fal's own server puts on its answers); fal-js resends them always.
const INGRESS_STATUSES = new Set([502, 503, 504]);

/** The newest log line fal gave ({message, level, source, timestamp} items, oldest first), if any. */
function lastLogLine(logs: unknown): string | undefined {
  if (!Array.isArray(logs)) return undefined;
  for (let i = logs.length - 1; i >= 0; i--) {
    const message = (logs[i] as { message?: unknown } | null)?.message;
    if (typeof message === 'string' && message.trim()) return message;
  }
  return undefined;
}

export function createFalEngine(opts: FalOptions): Engine {
  const base = new URL(opts.queueUrl.replace(/\/+$/, '') + '/');
  const client = createProviderClient({
    provider: 'fal',
    allowPrivate: opts.allowPrivate,
    callTimeoutCapMs: opts.callTimeoutCapMs,
    headers: { authorization: `Key ${opts.apiKey}`, accept: 'application/json' },
    timeoutMs: opts.timeoutMs ?? CALL_TIMEOUT_MS,
    maxBytes: MAX_JSON_BYTES,
    message: falMessage,
    safeToResend: SUBMIT_RETRYABLE,
    unknownOutcome: SUBMIT_UNKNOWN,
  });

  /** URLs the queue hands back are used only on the queue's own origin: the key never goes elsewhere. */
  const onQueue = (url: unknown, fallback: string): string => {
    if (typeof url === 'string') {
      try {
        if (new URL(url).origin === base.origin) return url;
      } catch {
        // not a URL: use ours
      }
    }
    return fallback;
  };

  // A submit that may have reached fal has an unknown outcome; a read is simply retried.
  const call = client.json;

  function requestUrls(endpoint: string, requestId: string) {
    const [owner, app] = endpoint.split('/');
    const root = new URL(`${owner}/${app}/requests/${encodeURIComponent(requestId)}`, base).href;
    return { status: `${root}/status`, response: root, cancel: `${root}/cancel` };
  }

  return {
    name: 'fal',
    kind: 'upstream',
    dedupesSubmit: () => false,

    refuse(operation: GenerationOperation, params: Record<string, unknown>, attachedImages: number) {
      if (operation !== 'ai-video' || !FAL_MODELS.includes(params.model as FalModel)) {
        return `${String(params.model ?? operation)} is not served by the fal engine of this version (it serves ${FAL_MODELS.join(', ')})`;
      }
      return falRefusal(params, attachedImages);
    },

    async submit(req: UpstreamRequest, attempt: { id: string; webhookUrl?: string }, signal: AbortSignal) {
      // Brand and product images reach fal as signed links to our stored copies (or the brand's own URLs).
      const attached = attachedImages(req.inputs).map((i) => i.url);
      const { endpoint, input } = falInput({ ...req.params, prompt: req.inputs.prompt }, opts.endpoints ?? {}, attached);
      const url = new URL(endpoint, base);
      if (attempt.webhookUrl) url.searchParams.set('fal_webhook', attempt.webhookUrl);
      const answer = await call('POST', url.href, input, signal, { submit: true }).catch((e: unknown) => {
        if (e instanceof ProviderAnswerError && INGRESS_STATUSES.has(e.status) && e.headers['x-fal-request-id'] === undefined) {
          throw new UpstreamError('transient', `fal answered ${e.status}`);
        }
        throw e;
      });
      const body = (answer ?? {}) as { request_id?: unknown; status_url?: unknown; response_url?: unknown; cancel_url?: unknown };
      if (typeof body.request_id !== 'string' || !body.request_id) throw new UpstreamError('unsent_unknown', 'fal answered the submit without a request id');
      const ours = requestUrls(endpoint, body.request_id);
      return {
        providerJobId: body.request_id,
        handle: {
          endpoint,
          status_url: onQueue(body.status_url, ours.status),
          response_url: onQueue(body.response_url, ours.response),
          cancel_url: onQueue(body.cancel_url, ours.cancel),
        },
      };
    },

    async poll(handle, signal): Promise<UpstreamStatus> {
      // logs=1: a running job's log lines (fal-js queue.status; null otherwise), its last one is the stage.
      const status = (await call('GET', `${String(handle.status_url)}?logs=1`, undefined, signal)) as
        | { status?: unknown; error?: unknown; error_type?: unknown; queue_position?: unknown; logs?: unknown }
        | undefined;
      const state = status?.status;
      if (state === 'IN_QUEUE') return { state: 'pending', detail: state, progress: queued(status?.queue_position) };
      if (state === 'IN_PROGRESS') return { state: 'pending', detail: state, progress: running(lastLogLine(status?.logs)) };
      if (state !== 'COMPLETED') throw new UpstreamError('transient', 'fal answered an unknown status');
      let result: unknown;
      try {
        result = await call('GET', String(handle.response_url), undefined, signal);
      } catch (e) {
        // fal answers a job it refused (content policy, invalid input) with an error on its result.
        if (e instanceof UpstreamError && e.failure === 'refused') return { state: 'failed', message: e.message };
        // A job that failed on fal's side is COMPLETED with `error` (https://fal.ai/docs/inference-api/queue/status):
        // its result will not come, however often it is asked.
        if (typeof status?.error === 'string' && status.error) {
          const type = typeof status.error_type === 'string' && status.error_type ? ` (${status.error_type.slice(0, 60)})` : '';
          return { state: 'failed', message: `fal could not make it: ${status.error.slice(0, 500)}${type}` };
        }
        throw e;
      }
      const video = (result as { video?: { url?: unknown } } | undefined)?.video;
      if (typeof video?.url !== 'string') return { state: 'failed', message: 'fal finished without a video' };
      return { state: 'succeeded', outputs: [{ url: video.url }] };
    },

    async cancel(handle, signal) {
      await call('PUT', String(handle.cancel_url), undefined, signal);
    },

    targets: (routeKey: string) => falTargets(routeKey, opts.endpoints ?? {}),
    check: createFalCheck({ queueUrl: opts.queueUrl, apiUrl: opts.apiUrl ?? 'https://api.fal.ai/v1', apiKey: opts.apiKey, dispatcher: client.dispatcher }),

    verifyHook: opts.jwksUrl ? createFalHookVerifier({ jwksUrl: opts.jwksUrl, dispatcher: client.dispatcher }) : undefined,
  };
}

/** fal's error text: `detail` as a string or pydantic-style [{msg}], else `message`. Never a key or URL of ours. */
function falMessage(json: unknown): string | undefined {
  const j = json as { detail?: unknown; message?: unknown } | undefined;
  if (typeof j?.detail === 'string') return j.detail.slice(0, 500);
  if (Array.isArray(j?.detail)) {
    const msgs = j.detail.map((d: { msg?: unknown }) => (typeof d?.msg === 'string' ? d.msg : '')).filter(Boolean);
    if (msgs.length) return msgs.join('; ').slice(0, 500);
  }
  if (typeof j?.message === 'string') return j.message.slice(0, 500);
  return undefined;
}
