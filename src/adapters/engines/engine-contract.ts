import type { GenerationOperation } from '../../domain/generation-types.ts';
import type { Readable } from 'node:stream';
import type { CheckResult } from '../provider-check.ts';
import type { PollBudget } from '../../domain/poll-schedule.ts';
import type { LifecycleTable } from './lifecycle.ts';

/**
 * What every engine is given and answers: one submit, then polls until the engine says the job
 * ended. For a provider, the core (services/generations/engine-jobs.ts) records every step, so a
 * worker that dies anywhere never makes the provider run (and bill) one generation twice.
 */
export interface UpstreamRequest {
  generationId: string;
  operation: GenerationOperation;
  /**
   * The stored, validated request (defaults applied). Its `quantity` counts the outputs still to
   * make: the request's own, less those an earlier attempt made and the core kept (`keep`).
   */
  params: Record<string, unknown>;
  /** The images the request names or implies, resolved once by the core for every adapter. */
  inputs: UpstreamInputs;
}

/** An input file (image, audio, video): a link the provider can fetch, and its bytes for engines that take files inline (the local renderer reads every input this way). */
export interface UpstreamFile {
  /** The request's own URL, or a signed link to our stored copy (reachable on PUBLIC_BASE_URL or S3). */
  url: string;
  /**
   * The bytes whole, through the SSRF-safe downloader or from storage: for images an engine decodes
   * or sends inline (bounded by the image limit). A failure is the provider's refusal to use it.
   */
  read(signal: AbortSignal): Promise<{ bytes: Buffer; mime: string }>;
  /** Any file as a stream (videos, audio): never held whole in memory. `size` when it is known before reading. */
  open(signal: AbortSignal): Promise<{ stream: Readable; mime: string; size?: number }>;
}

export interface UpstreamInputs {
  /** The prompt as the provider gets it: for images, brand identity and product details woven in; for product shots, the style's prompt. */
  prompt: string;
  firstFrame?: UpstreamFile;
  lastFrame?: UpstreamFile;
  /** `reference_image_url` and `reference_image_urls`, in the request's order. */
  references: UpstreamFile[];
  /** `brand_id`: its logo, then its reference image, whichever it has. */
  brandImages: UpstreamFile[];
  /** `product_ids` (or product shots' `product_id`): each product's image. */
  productImages: UpstreamFile[];
  /** talking-avatar and swap-avatar: the face (the avatar's image, the product's for `avatar_type: product`, or swap's `image_url`). */
  face?: UpstreamFile;
  /** talking-avatar: what the avatar says, always ours: the team's voiceover, or the script spoken by adforge's speech engine (MP3). */
  speech?: UpstreamFile;
  /** swap-avatar, localize, video edit: the source video (`video_url`, or a completed generation's result as a signed link). */
  video?: UpstreamFile;
  /** `brand_id`: the brand itself, for an engine that draws it (the local renderer); its images are also in `brandImages`. */
  brand?: { name: string; colorPrimary: string | null; colorAccent: string | null; logo?: UpstreamFile; reference?: UpstreamFile };
  /** talking-avatar with `voice_id`, for an engine that speaks the script itself: the catalogue voice's synthesizer settings. */
  voice?: { language: string; variant?: string; pitch?: number; speed?: number };
  /** product shots: the style template; video edit: the caption template (as stored in the catalogue). */
  template?: Record<string, unknown>;
}

/** Every image the request attaches as a reference, in the order the prompt names them. */
export const attachedImages = (i: UpstreamInputs): UpstreamFile[] => [...i.references, ...i.brandImages, ...i.productImages];

export interface UpstreamSubmission {
  providerJobId: string;
  /** What poll and cancel need to find the job again; stored with the attempt. Never a key. */
  handle: Record<string, unknown>;
  /** A provider that answers at once (an image API) gives the outcome with the submit. */
  done?: UpstreamStatus;
  /**
   * An engine in this process (the local renderer): the temp dir holding the `file` outputs of
   * `done`. The core removes it once they are stored, or could not be.
   */
  tempDir?: string;
}

/**
 * A result, copied into our storage at once (provider links expire): a link anyone may read,
 * an image the provider answered inline, a file an engine in this process wrote, or a read only
 * the adapter can make (it needs the key), answered as a stream that goes to storage as it arrives.
 * `open` fails (or its stream does) with a DownloadError for a passing failure, which asks the
 * provider again for its result; with an UpstreamError for a result that will never do (too large).
 */
export type UpstreamOutput =
  | { url: string }
  /** An image inside the provider's answer (base64 in its JSON): in memory already, as small as that answer. */
  | { bytes: Buffer }
  /**
   * A file an engine in this process rendered (in the submission's `tempDir`), with what it knows
   * of it (media type and extension): stored from disk as a stream, never read whole.
   */
  | { file: string; type: { mime: string; ext: string } }
  | { open: (signal: AbortSignal) => Promise<Readable> };

/** A job's progress as its engine reports it. `fraction` is absent where the engine names only a stage. */
export interface EngineProgress {
  fraction?: number;
  stage: string;
}

export type UpstreamStatus =
  | {
      state: 'pending';
      retryAfterMs?: number;
      detail?: string;
      /** How far the job is, as the engine reports it: 0 to 1 where it can say, and its stage in words ("queued at position 3", "step 12 of 30"). */
      progress?: EngineProgress;
    }
  | { state: 'succeeded'; outputs: UpstreamOutput[]; cost?: number }
  | { state: 'failed'; message: string };

/**
 * The one engine contract. `upstream`: the engine runs on a provider's servers (submit, then poll;
 * every step recorded); `local`: it renders in this process and its submit answers `done` at once
 * with the files (nothing recorded or polled; the built-in local engine).
 */
export interface Engine {
  readonly name: string;
  readonly kind: 'upstream' | 'local';
  /**
   * Sending the same attempt twice makes one job for this operation (an idempotency key, a client
   * job id): only then may a submit interrupted before its answer be sent again.
   */
  dedupesSubmit(operation: GenerationOperation): boolean;
  /**
   * Why this provider cannot make what the request asks (checked at create: a 400), or undefined.
   * `attachedImages` counts the reference images the request brings (URLs, brand, products).
   */
  refuse(operation: GenerationOperation, params: Record<string, unknown>, attachedImages: number): string | undefined;
  /**
   * `attempt.onProgress`: for an engine that works while the submit runs (the local renderer), how
   * it reports its steps as it goes; the core throttles them. Upstream engines report through poll.
   * `attempt.keep`: for an engine that makes its outputs one call at a time (Gemini: one image per
   * call), hands each over as soon as it is made; the core stores and records it at once, so a later
   * call's failure loses none of them and the next attempt makes only the rest. It resolves once the
   * output is kept and rejects (an UpstreamError) when it cannot be (the generation ended): the
   * engine then stops. Outputs handed over are not answered again in `done`.
   */
  submit(
    request: UpstreamRequest,
    attempt: { id: string; webhookUrl?: string; onProgress?: (progress: EngineProgress) => void; keep?: (output: UpstreamOutput) => Promise<void> },
    signal: AbortSignal,
  ): Promise<UpstreamSubmission>;
  poll(handle: Record<string, unknown>, signal: AbortSignal): Promise<UpstreamStatus>;
  cancel?(handle: Record<string, unknown>, signal: AbortSignal): Promise<void>;
  /**
   * Removes what the provider keeps of this job on the operator's own servers (inputs uploaded for
   * it, its outputs, its history: ComfyUI), once the generation has ended, whatever its end, so
   * that nothing outlives deletion, retention or team deletion. Best effort; called by the core.
   */
  release?(handle: Record<string, unknown>, signal: AbortSignal): Promise<void>;
  /**
   * Checks an inbound webhook by the provider's documented scheme; the job it names, or null when
   * the signature (or its freshness) does not hold. Only a hint: the poll decides.
   */
  verifyHook?(headers: Record<string, string | string[] | undefined>, rawBody: Buffer): Promise<{ providerJobId: string } | null>;
  /**
   * The provider's own names (models, endpoints, templates) a route key may send work to: the
   * key is one of our models, an operation, or `*`. Used by `adforge providers check`.
   */
  targets?(routeKey: string): string[];
  /** Free reads only: the key first (target `key`), then each target. */
  check?(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]>;
  /**
   * How often this provider's jobs may be read (`<P>_POLL_BUDGET`: its documented limit, or a
   * conservative default where it publishes none): every poll of its jobs, across jobs and worker
   * processes, is spaced to stay within it. Unset: the core's own default.
   */
  readonly pollBudget?: PollBudget;
  /**
   * One read of many jobs, where the provider reads them by id (HeyGen's GET /v3/videos/statuses, sync.so's GET /v2/generations?ids=): the poll that
   * holds the provider's read slot also reads the other live jobs it can, and each ends or waits as
   * its own poll would. Absent: every job is read alone.
   */
  readonly batchRead?: BatchRead;
  /**
   * The provider calls back for this operation to a URL given with the submit but does not sign
   * the call (HeyGen's callback_url): the core gives it a URL holding a token of that one attempt.
   */
  callsBack?(operation: GenerationOperation): boolean;
  /**
   * The dated lifecycle of the provider's models and endpoints this engine sends work to (its
   * folder's <name>-lifecycle.ts): a route that sends a model here after the provider retired it
   * stops the start, and `targets` says which of them a route uses. Unset: the table of the
   * provider module of the same name (providers.ts).
   */
  readonly lifecycle?: LifecycleTable;
}

/** How an engine reads many of its jobs at once (Engine.batchRead). */
export interface BatchRead {
  /** The jobs a batched read can cover: those whose handle holds these fields (HeyGen: `{kind: 'video'}`). */
  readonly handles: Readonly<Record<string, string>>;
  /** At most this many jobs are asked of one batched read. */
  readonly size: number;
  /**
   * The status of each job it found, by provider job id; a job it did not find is absent (it is then
   * read alone). `nextPage`: asked before each read after the first; false stops (the provider's budget).
   */
  pollMany(handles: ReadonlyArray<Record<string, unknown>>, signal: AbortSignal, nextPage: () => Promise<boolean>): Promise<Map<string, UpstreamStatus>>;
}

/**
 * What went wrong talking to a provider:
 * - rate_limited: not done; try again after `retryAfterMs`;
 * - transient: a 5xx, a reset, a timeout on a read: try again with backoff;
 * - unsent_unknown: a submit whose answer was lost: the job may exist upstream;
 * - in_progress: the provider says the first request under this idempotency key is still running
 *   (HeyGen's 409, sync.so's IDEMPOTENCY_* answers): the attempt keeps its key and asks again
 *   later for the original's answer or its replay; a fresh key would make a second job;
 * - refused: the provider will not make it (content policy, invalid input): `message` is shown to the user;
 * - auth: the key was refused: the operator must act.
 */
export type UpstreamFailure = 'rate_limited' | 'transient' | 'unsent_unknown' | 'in_progress' | 'refused' | 'auth';

export class UpstreamError extends Error {
  readonly failure: UpstreamFailure;
  readonly retryAfterMs: number | undefined;
  constructor(failure: UpstreamFailure, message: string, opts: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'UpstreamError';
    this.failure = failure;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** True for an engine on a provider's servers (its jobs are recorded, polled, and counted by its breaker). */
export const isUpstreamEngine = (e: { kind?: string }): boolean => e.kind === 'upstream';
