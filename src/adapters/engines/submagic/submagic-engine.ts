import type { PollBudget } from '../../../domain/poll-schedule.ts';
import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { StreamedForm, createProviderClient, messageOrError } from '../upstream-http.ts';
import { withSpooledFile } from '../spooled-file.ts';
import { uploadTimeoutMs } from '../upload-timeout.ts';
import { UpstreamError, type Engine, type UpstreamRequest, type UpstreamStatus } from '../engine-contract.ts';
import { stage } from '../progress.ts';
import { createSubmagicCheck } from './submagic-check.ts';
import { SUBMAGIC_MAX_UPLOAD_BYTES } from './submagic-limits.ts';

/*
 * Submagic's API, held to the contracts in test/contracts/submagic/ (written from
 * docs.submagic.co/api-reference): `x-api-key`; POST /v1/projects {title, language, videoUrl,
 * templateName, autoRender} or POST /v1/projects/upload (multipart `file` with the same fields)
 * -> a project {id, status processing | transcribing | exporting | completed | failed}; GET
 * /v1/projects/{id}, whose `downloadUrl` is filled once the video is rendered; GET /v1/templates
 * for the operator's check. An API project renders by itself as soon as it is transcribed, unless
 * created with `autoRender: false` (docs.submagic.co/guides/edit-transcript-before-rendering): then
 * `completed` without `downloadUrl` means transcribed and waiting, and only an export renders it
 * (POST /v1/projects/{id}/export, or a person in Submagic's editor). adforge sends auto_approve as
 * autoRender and never exports itself: with autoRender a render is already on its way, and a
 * project waiting for approval is a person's to export.
 * Reading a project is limited to 100 requests an hour (get-project): the engine declares that
 * budget and the upstream core spaces every poll of this key's projects to stay within it
 * (one shared slot per provider in the database, see services/generations/poll-budget.ts).
 * Submagic's webhook (webhookUrl on create: a POST {projectId, status, downloadUrl, directUrl,
 * timestamp}) carries no signature, and a secret in our callback URL cannot be checked (a hook is
 * verified from its headers and body only), so none is asked for: adforge polls. No idempotency
 * key: a lost submit is not resent.
 */
export interface SubmagicOptions {
  apiUrl: string;
  apiKey: string;
  /** Our caption template ids to Submagic template names, over the defaults (SUBMAGIC_TEMPLATES). */
  templates?: Readonly<Record<string, string>>;
  /** How often this key may read its projects (SUBMAGIC_POLL_BUDGET); Submagic documents 100 an hour. */
  pollBudget?: PollBudget;
  allowPrivate: boolean;
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on every call's own timeout. */
  callTimeoutCapMs?: number;
  /** One time limit for every call (tests); otherwise each call has its own. */
  timeoutMs?: number;
}

/**
 * Our caption catalogue to Submagic's templates (GET /v1/templates lists an account's; "Sara" is
 * Submagic's default): the nearest look by weight, colour and position.
 */
export const SUBMAGIC_DEFAULT_TEMPLATES: Readonly<Record<string, string>> = {
  'bold-pop': 'Hormozi 2',
  'clean-subtitle': 'Sara',
  karaoke: 'Beast',
  'headline-top': 'Hormozi 1',
  'minimal-lower': 'Daniel',
  'neon-glow': 'Leila',
  'story-serif': 'Ella',
};

/** get-project: "has a rate limit of 100 requests per hour" (a newer page is said to give 500; the lower holds). */
export const SUBMAGIC_POLL_BUDGET: PollBudget = [{ requests: 100, perMs: 3_600_000 }];
/** The project title we send; create-project takes 1-100 characters. */
export const submagicTitle = (generationId: string): string => `adforge ${generationId}`;

const MAX_JSON_BYTES = 4 * 1024 * 1024;
// Submagic publishes no time limits; its calls answer at once (a create answers `processing` and
// works on in the background): a read gets 30 s, a create 60 s, an upload 60 s plus its video's
// time at the slowest rate waited for (a video may be 2 GB).
const READ_TIMEOUT_MS = 30_000;
const CREATE_TIMEOUT_MS = 60_000;

export function createSubmagicEngine(opts: SubmagicOptions): Engine {
  const templates = { ...SUBMAGIC_DEFAULT_TEMPLATES, ...(opts.templates ?? {}) };

  const { json: call, dispatcher } = createProviderClient({
    provider: 'Submagic',
    baseUrl: opts.apiUrl,
    allowPrivate: opts.allowPrivate,
    callTimeoutCapMs: opts.callTimeoutCapMs,
    headers: { 'x-api-key': opts.apiKey, accept: 'application/json' },
    timeoutMs: opts.timeoutMs ?? READ_TIMEOUT_MS,
    maxBytes: MAX_JSON_BYTES,
    message: messageOrError,
    // Submagic's 429 gives its wait as `retryAfter` seconds in the body (create-project's error responses).
    retryAfterInBody: (json) => {
      const s = (json as { retryAfter?: unknown } | undefined)?.retryAfter;
      return typeof s === 'number' && s >= 0 && s <= 86_400 ? s * 1000 : undefined;
    },
  });

  async function submit({ params, inputs, generationId }: UpstreamRequest, signal: AbortSignal) {
    if (!inputs.video) throw new UpstreamError('refused', 'the video to caption is missing');
    const fields = { title: submagicTitle(generationId), language: String(params.language ?? 'en'), templateName: templates[String(params.template_id)] ?? 'Sara' };
    // auto_approve is Submagic's autoRender: rendered as soon as transcribed, or left for a person to approve and export.
    const autoRender = params.auto_approve !== false;
    let project: Record<string, unknown> | undefined;
    if (typeof params.video_url === 'string') {
      project = await call('POST', '/v1/projects', { ...fields, autoRender, videoUrl: params.video_url }, signal, { submit: true, timeoutMs: opts.timeoutMs ?? CREATE_TIMEOUT_MS });
    } else {
      // A generation of ours is sent as a file: our links need not be public. It goes from disk, never whole in memory.
      const tooLarge = () => new UpstreamError('refused', 'the video is larger than the 2 GB Submagic takes');
      project = await withSpooledFile(inputs.video, signal, { maxBytes: SUBMAGIC_MAX_UPLOAD_BYTES, tooLarge }, (video) =>
        call('POST', '/v1/projects/upload', new StreamedForm({ ...fields, autoRender: String(autoRender) }, { name: 'file', blob: video.blob, filename: 'video.mp4' }), signal, {
          submit: true,
          timeoutMs: opts.timeoutMs ?? uploadTimeoutMs(video.size, CREATE_TIMEOUT_MS),
        }),
      );
    }
    if (typeof project?.id !== 'string') throw new UpstreamError('unsent_unknown', 'Submagic answered without a project id');
    return { providerJobId: project.id, handle: { id: project.id, autoApprove: autoRender } };
  }

  return {
    name: 'submagic',
    kind: 'upstream',
    dedupesSubmit: () => false,
    pollBudget: opts.pollBudget ?? SUBMAGIC_POLL_BUDGET,
    refuse(operation: GenerationOperation, params: Record<string, unknown>) {
      if (operation !== 'video-edit') return `${operation} is not served by the Submagic engine (it captions videos: video edit)`;
      if (!templates[String(params.template_id)]) return `template_id: ${String(params.template_id)} has no Submagic template (SUBMAGIC_TEMPLATES maps one)`;
      return undefined;
    },
    submit: (req, _attempt, signal) => submit(req, signal),

    async poll(handle, signal): Promise<UpstreamStatus> {
      const id = encodeURIComponent(String(handle.id));
      const p = (await call('GET', `/v1/projects/${id}`, undefined, signal)) ?? {};
      if (typeof p.downloadUrl === 'string' && p.downloadUrl) return { state: 'succeeded', outputs: [{ url: p.downloadUrl }] };
      if (p.status === 'failed') {
        const reason = p.failureReason ?? p.error;
        return { state: 'failed', message: `Submagic could not caption the video: ${typeof reason === 'string' ? reason.slice(0, 500) : 'failed'}` };
      }
      if (p.status === 'completed') {
        // Completed without a video: transcribed. With autoRender Submagic's own render is on its way; without, a person approves and exports it.
        if (!handle.autoApprove) return { state: 'pending', detail: 'awaiting approval in Submagic', progress: stage('awaiting approval in Submagic') };
        return { state: 'pending', detail: 'rendering', progress: stage('rendering') };
      }
      // Submagic's states (processing, transcribing, exporting) are the stage; it gives no fraction.
      const state = typeof p.status === 'string' && p.status ? p.status : 'processing';
      return { state: 'pending', detail: state, progress: stage(state.slice(0, 60)) };
    },

    // The Submagic template names a route may send work to: video edit is the only operation served.
    targets: (routeKey) => (routeKey === '*' || routeKey === 'video-edit' ? [...new Set(Object.values(templates))] : []),
    check: createSubmagicCheck({ baseUrl: opts.apiUrl, apiKey: opts.apiKey, dispatcher, timeoutMs: opts.timeoutMs ?? READ_TIMEOUT_MS }),
  };
}
