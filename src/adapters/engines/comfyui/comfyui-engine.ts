import { createHash, randomUUID } from 'node:crypto';
import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { createProviderClient } from '../upstream-http.ts';
import { UpstreamError, attachedImages, type Engine, type EngineProgress, type UpstreamFile, type UpstreamRequest, type UpstreamStatus } from '../engine-contract.ts';
import { COMFYUI_OPERATIONS, fillGraph, loadWorkflow, workflowKeys, type Workflow } from './workflows.ts';
import { createProgressWatch, type ProgressWatch } from './comfyui-progress.ts';
import { createComfyUiCheck, modelFiles } from './comfyui-check.ts';
import { comfyServer, type ComfyLog, type ComfyServer } from './comfyui-server.ts';

/*
 * A ComfyUI server (or several), spoken to as its own server code defines the API: Comfy-Org/ComfyUI
 * server.py @ 5e14d797 (post_prompt, get_prompt, get_history_prompt_id, get_job_by_id, get_jobs,
 * cancel_job_by_id, post_queue, post_interrupt, image_upload, view_image, websocket_handler),
 * execution.py @ 04e2a91 (validate_prompt, PromptQueue, the execution messages) and main.py @
 * 02018c7 (history status, progress); the stored contracts are test/contracts/comfyui/. The job id
 * is ours: the attempt id (a lowercase UUID) is the `prompt_id` of POST /prompt, so a submit whose
 * answer was lost is found again on every server before anything is sent again. Each job goes to the
 * server with the shortest queue (GET /prompt: a count, a few bytes); the server is kept in the
 * handle. Every read concerns one prompt and is bounded by it (comfyui-server.ts): GET /queue, which
 * answers every queued prompt whole, is read only by builds that offer nothing else. A finished
 * prompt's output node files are read through GET /view; an `execution_error` fails it with the
 * node's own words. Inputs are uploaded with POST /upload/image (ComfyUI stores any file there) and
 * their names put into the load nodes the mapping names. ComfyUI has no authentication.
 */
export interface ComfyUiOptions {
  /** The servers' roots (COMFYUI_URL). */
  urls: readonly string[];
  /** The workflows folder (COMFYUI_WORKFLOWS). */
  workflowsDir: string;
  /** The ENGINE_ROUTES keys that send work to comfyui: each needs its workflow, checked at start. */
  routeKeys: readonly string[];
  allowPrivate: boolean;
  timeoutMs?: number;
  /** Follow each server's WebSocket for step progress (off in unit checks). */
  watchProgress?: boolean;
  /** Where ComfyUI's full answers go (the operator's log). */
  log?: ComfyLog;
}
const MAX_JSON_BYTES = 16 * 1024 * 1024;
const MAX_MEDIA_BYTES = 1024 * 1024 * 1024;
const VIDEO_EXT = /\.(mp4|webm|mkv|mov)$/i;

/** ComfyUI's 400 body: {error: {type, message, details}, node_errors: {id: {errors: [{message, details}], class_type}}}, in words. */
export function comfyMessage(json: unknown): string | undefined {
  const j = json as { error?: unknown; node_errors?: Record<string, { class_type?: string; errors?: Array<{ message?: string; details?: string }> }> } | undefined;
  const e = j?.error;
  const head = typeof e === 'string' ? e : typeof (e as { message?: unknown })?.message === 'string' ? (e as { message: string }).message : undefined;
  const nodes = Object.entries(j?.node_errors && !Array.isArray(j.node_errors) ? j.node_errors : {}).map(
    ([id, n]) => `node ${id} (${n.class_type ?? '?'}): ${(n.errors ?? []).map((x) => [x.message, x.details].filter(Boolean).join(': ')).join('; ')}`,
  );
  const text = [head, ...nodes].filter(Boolean).join('; ');
  return text ? text.slice(0, 500) : undefined;
}

type HistoryFile = { filename: string; subfolder?: string; type?: string };
type HistoryEntry = {
  outputs?: Record<string, Record<string, unknown>>;
  status?: { status_str?: string; completed?: boolean; messages?: Array<[string, Record<string, unknown>]> };
};

/** Why a finished prompt failed, from its history's status messages (execution_error: the node and its exception message). */
export function historyFailure(entry: HistoryEntry): string | undefined {
  const messages = entry.status?.messages ?? [];
  const error = messages.find(([t]) => t === 'execution_error')?.[1];
  if (error) return `ComfyUI node ${String(error.node_id ?? '?')} (${String(error.node_type ?? '?')}) failed: ${String(error.exception_message ?? 'no message').trim().slice(0, 500)}`;
  if (messages.some(([t]) => t === 'execution_interrupted')) return 'ComfyUI interrupted the workflow';
  if (entry.status?.status_str === 'error') return 'ComfyUI ended the workflow with an error';
  return undefined;
}

/** The result files of the output node: images, or the video savers' (SaveVideo puts its file under `images`), by extension. */
export function outputFiles(entry: HistoryEntry, node: string, kind: 'image' | 'video'): HistoryFile[] {
  const out = entry.outputs?.[node] ?? {};
  const files = ['images', 'gifs', 'videos', 'video']
    .flatMap((k) => (Array.isArray(out[k]) ? (out[k] as unknown[]) : []))
    .filter((f): f is HistoryFile => typeof (f as HistoryFile | null)?.filename === 'string');
  return files.filter((f) => (kind === 'video' ? VIDEO_EXT.test(f.filename) : !VIDEO_EXT.test(f.filename)));
}

/** The images a request names itself (its URLs, frames, products); a brand's images, counted by the core where it can, come on top. */
export function imagesNamed(p: Record<string, unknown>): number {
  const list = (v: unknown) => (Array.isArray(v) ? v.length : 0);
  return list(p.reference_image_urls) + list(p.product_ids) + [p.reference_image_url, p.product_id, p.first_frame_image_url, p.last_frame_image_url].filter(Boolean).length;
}

/** A seed from the generation: the same request sent again draws the same picture. */
const seedOf = (generationId: string) => createHash('sha256').update(generationId).digest().readUInt32BE(0);

/** The output nodes a 200 from POST /prompt says were dropped: every node error names the outputs it failed in `dependent_outputs`. */
export function droppedOutputs(nodeErrors: unknown): Set<string> {
  const out = new Set<string>();
  if (!nodeErrors || typeof nodeErrors !== 'object' || Array.isArray(nodeErrors)) return out;
  for (const [id, e] of Object.entries(nodeErrors as Record<string, { dependent_outputs?: unknown }>)) {
    const deps = Array.isArray(e?.dependent_outputs) ? e.dependent_outputs.filter((d): d is string => typeof d === 'string') : [];
    // A node error without its outputs (an older build's answer) is taken as failing the node itself.
    for (const d of deps.length ? deps : [id]) out.add(d);
  }
  return out;
}

/** The least loaded of the servers' loads (ties: the first listed); undefined when none answered. */
export function leastLoaded<T extends { load: number }>(servers: readonly (T | undefined)[]): T | undefined {
  return servers.reduce<T | undefined>((best, s) => (s && (!best || s.load < best.load) ? s : best), undefined);
}

export function createComfyUiEngine(opts: ComfyUiOptions): Engine {
  // Every workflow a route needs (and, for `*` or none named, every one in the folder) is read and checked now: a broken one stops the start.
  const keys = opts.routeKeys.includes('*') || opts.routeKeys.length === 0 ? workflowKeys(opts.workflowsDir) : [];
  const workflows = new Map<string, Workflow>();
  for (const key of new Set([...keys, ...opts.routeKeys.filter((k) => k !== '*')])) workflows.set(key, loadWorkflow(opts.workflowsDir, key));
  for (const w of workflows.values()) {
    const opKind = (COMFYUI_OPERATIONS as readonly string[]).includes(w.key) ? (w.key === 'ai-video' ? 'video' : 'image') : undefined;
    if (opKind && opKind !== w.mapping.kind) throw new Error(`invalid configuration: COMFYUI_WORKFLOWS ${w.files.mapping}: kind is ${w.mapping.kind}, but ${w.key} makes ${opKind}s`);
  }

  const clients = new Map(
    opts.urls.map((url) => [
      url,
      createProviderClient({ provider: 'ComfyUI', baseUrl: url, allowPrivate: opts.allowPrivate, headers: { accept: 'application/json' }, timeoutMs: opts.timeoutMs ?? 120_000, maxBytes: MAX_JSON_BYTES, maxBinaryBytes: MAX_MEDIA_BYTES, message: comfyMessage }),
    ]),
  );
  const servers = new Map(opts.urls.map((url) => [url, comfyServer(url, { dispatcher: clients.get(url)!.dispatcher, timeoutMs: opts.timeoutMs ?? 120_000, log: opts.log })]));
  const server = (url: string): ComfyServer => {
    const s = servers.get(url);
    if (!s) throw new UpstreamError('refused', `the ComfyUI server ${url} of this job is no longer in COMFYUI_URL`);
    return s;
  };
  const client = (url: string) => {
    const c = clients.get(url);
    if (!c) throw new UpstreamError('refused', `the ComfyUI server ${url} of this job is no longer in COMFYUI_URL`);
    return c;
  };
  // Prompts are queued without a client_id: ComfyUI then sends their `progress` to every socket
  // (server.py send_sync with sid None), so whichever worker process polls a job sees its steps,
  // not only the one that sent it. The socket's own id only names this watcher.
  const watch: ProgressWatch | undefined = opts.watchProgress === false ? undefined : createProgressWatch({ urls: opts.urls, clientId: `adforge-${randomUUID()}` });

  const workflowFor = (operation: string, params: Record<string, unknown>): Workflow | undefined =>
    (typeof params.model === 'string' ? workflows.get(params.model) : undefined) ?? workflows.get(operation);

  /** Each server's queue length (GET /prompt), or undefined for one that does not answer (down: skipped). */
  async function loads(signal: AbortSignal) {
    return Promise.all(opts.urls.map((url) => server(url).queueLength(signal).then((load) => ({ url, load }), () => undefined)));
  }

  /**
   * The server that already holds this prompt (queued, running or in its history), if one answers
   * so; a server that does not answer is skipped. A build without the jobs API that has prompts
   * queued is asked with GET /queue: when that cannot be read, nobody can tell, and nothing is sent.
   */
  async function holder(promptId: string, signal: AbortSignal): Promise<string | undefined> {
    const found = await Promise.all(
      opts.urls.map(async (url) => {
        const s = server(url);
        const where = await s.locate(promptId, signal).catch(() => undefined);
        if (!where || where.state === 'unknown') return undefined;
        if (where.state !== 'somewhere') return url;
        const held = await s.holds(promptId, signal).catch((e: unknown) => {
          throw new UpstreamError('transient', `cannot tell whether the ComfyUI server ${url} already holds this prompt (its queue could not be read); asked again later`, { cause: e });
        });
        return held ? url : undefined;
      }),
    );
    return found.find(Boolean);
  }

  async function upload(url: string, file: UpstreamFile, name: string, signal: AbortSignal): Promise<string> {
    const { bytes, mime } = await file.read(signal);
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(bytes)], { type: mime }), `${name}.${extOf(mime)}`);
    form.append('type', 'input');
    form.append('subfolder', 'adforge');
    form.append('overwrite', 'true');
    const j = await client(url).json('POST', '/upload/image', form, signal);
    if (typeof j?.name !== 'string') throw new UpstreamError('transient', 'ComfyUI answered the upload without a file name');
    return typeof j.subfolder === 'string' && j.subfolder ? `${j.subfolder}/${j.name}` : j.name;
  }

  async function submit(req: UpstreamRequest, promptId: string, signal: AbortSignal) {
    const w = workflowFor(req.operation, req.params);
    if (!w) throw new UpstreamError('refused', `no ComfyUI workflow for ${req.operation}`);
    // A resend of an attempt whose answer was lost: the prompt is already on a server, never queued twice.
    const held = await holder(promptId, signal);
    if (held) return { providerJobId: promptId, handle: { server: held, promptId, output: w.mapping.output, kind: w.mapping.kind } };
    const target = leastLoaded(await loads(signal));
    if (!target) throw new UpstreamError('transient', `no ComfyUI server answered (${opts.urls.join(', ')})`);

    const i = req.inputs;
    const images = [i.face, i.firstFrame, i.lastFrame, ...attachedImages(i)].filter((f): f is UpstreamFile => Boolean(f));
    const slots = w.mapping.inputs.images;
    if (images.length < slots.length) throw new UpstreamError('refused', `the ComfyUI workflow for ${w.key} takes ${slots.length} input image(s); the request brings ${images.length}`);
    const names: string[] = [];
    for (const [n, file] of images.slice(0, slots.length).entries()) names.push(await upload(target.url, file, `${promptId}-${n + 1}`, signal));
    let video: string | undefined;
    let audio: string | undefined;
    if (w.mapping.inputs.video) {
      if (!i.video) throw new UpstreamError('refused', `the ComfyUI workflow for ${w.key} takes a video; the request brings none`);
      video = await upload(target.url, i.video, `${promptId}-video`, signal);
    }
    if (w.mapping.inputs.audio) {
      if (!i.speech) throw new UpstreamError('refused', `the ComfyUI workflow for ${w.key} takes audio; the request brings none`);
      audio = await upload(target.url, i.speech, `${promptId}-audio`, signal);
    }
    const prompt = fillGraph(w, { prompt: i.prompt, params: req.params, seed: seedOf(req.generationId), images: names, ...(video ? { video } : {}), ...(audio ? { audio } : {}) });

    await watch?.ready(target.url, promptId);
    const answer = await client(target.url)
      .json('POST', '/prompt', { prompt, prompt_id: promptId }, signal, { submit: true })
      .catch(async (e: unknown) => {
        // A lost answer, or a refusal such as a build's 409 for a prompt_id it already holds: it is queued if a server says so.
        if (e instanceof UpstreamError && (e.failure === 'unsent_unknown' || e.failure === 'refused')) {
          const at = await holder(promptId, signal).catch(() => undefined);
          if (at) return { prompt_id: promptId, node_errors: {} } as Record<string, unknown>;
        }
        throw e;
      });
    // A 200 with node_errors: validate_prompt dropped the outputs they name and queued the prompt
    // with the others, and it starts at once on an idle server (execution.py @ 04e2a91).
    const dropped = droppedOutputs(answer?.node_errors);
    if (dropped.has(w.mapping.output)) {
      await server(target.url)
        .end(promptId, signal)
        .catch((e: unknown) => opts.log?.warn({ err: e, comfyui: target.url, prompt_id: promptId }, 'a ComfyUI prompt without its result node could not be ended'));
      throw new UpstreamError('refused', `ComfyUI refused the workflow: ${comfyMessage(answer) ?? `node ${w.mapping.output} did not validate`}`);
    }
    if (dropped.size) opts.log?.warn({ comfyui: target.url, prompt_id: promptId, node_errors: answer?.node_errors }, `ComfyUI dropped output node(s) ${[...dropped].join(', ')} of the ${w.key} workflow; its result node runs`);
    const id = typeof answer?.prompt_id === 'string' ? answer.prompt_id : promptId;
    return { providerJobId: id, handle: { server: target.url, promptId: id, output: w.mapping.output, kind: w.mapping.kind } };
  }

  async function poll(handle: Record<string, unknown>, signal: AbortSignal): Promise<UpstreamStatus> {
    const url = String(handle.server);
    const id = String(handle.promptId);
    const c = client(url);
    const where = await server(url).locate(id, signal);
    if (where.state === 'pending') {
      const stage = where.position ? `queued at position ${where.position}` : where.behind ? `queued behind more than ${where.behind} prompts` : 'queued';
      return { state: 'pending', detail: stage, progress: { stage } };
    }
    if (where.state === 'running' || where.state === 'somewhere') {
      // This process may not have sent it: follow the server's socket from now on (not waited for).
      void watch?.ready(url, id);
      const seen = watch?.progressOf(id);
      const progress: EngineProgress = seen ?? { stage: where.state === 'running' ? 'running' : `waiting: ${where.remaining} prompt(s) queued or running on the server` };
      return { state: 'pending', detail: progress.stage, progress };
    }
    // Lost: the server restarted (its queue is in memory) or its history was cleared.
    if (where.state === 'unknown') return { state: 'failed', message: `the ComfyUI server ${url} no longer knows the job (it was restarted or its history cleared)` };
    const entry = where.entry;
    const failure = historyFailure(entry);
    watch?.forget(id);
    if (failure) return { state: 'failed', message: failure };
    const kind = handle.kind === 'video' ? 'video' : 'image';
    const files = outputFiles(entry, String(handle.output), kind);
    if (!files.length) return { state: 'failed', message: `the ComfyUI workflow finished without ${kind === 'video' ? 'a video' : 'an image'} from node ${String(handle.output)}` };
    return {
      state: 'succeeded',
      outputs: files.map((f) => ({
        open: async (s: AbortSignal) => {
          const q = new URLSearchParams({ filename: f.filename, subfolder: f.subfolder ?? '', type: f.type ?? 'output' });
          return (await c.call('GET', `/view?${q.toString()}`, undefined, s, { binary: true, stream: true })).body!;
        },
      })),
    };
  }

  return {
    name: 'comfyui',
    kind: 'upstream',
    // Our prompt_id, and a look on every server before a resend, make a lost answer safe to send again.
    dedupesSubmit: () => true,
    refuse(operation: GenerationOperation, params: Record<string, unknown>, attached: number) {
      if (!(COMFYUI_OPERATIONS as readonly string[]).includes(operation)) return `${operation} is not served by the comfyui engine (it makes ${COMFYUI_OPERATIONS.join(', ')})`;
      const w = workflowFor(operation, params);
      if (!w) return `${operation} is not served by the comfyui engine: COMFYUI_WORKFLOWS has no workflow for it (${[...workflows.keys()].join(', ') || 'none'})`;
      const needed = w.mapping.inputs.images.length;
      const brings = Math.max(attached, imagesNamed(params));
      if (brings < needed) return `the ComfyUI workflow for ${w.key} takes ${needed} input image(s); the request brings ${brings}`;
      // A video's frames and references are what it is made from: a workflow without slots for them would silently drop them.
      if (operation === 'ai-video' && imagesNamed(params) > needed) return `the ComfyUI workflow for ${w.key} takes ${needed} input image(s); the request brings ${imagesNamed(params)} (frames or reference images)`;
      return undefined;
    },
    submit: (req, attempt, signal) => submit(req, attempt.id, signal),
    poll,
    // Dequeued, or interrupted only while it is the one running (comfyui-server.ts end()).
    cancel: (handle, signal) => server(String(handle.server)).end(String(handle.promptId), signal),
    // The model files (`<models folder>/<file>`) the route key's workflow loads, for `adforge providers check`.
    targets: (routeKey) => [...new Set((routeKey === '*' ? [...workflows.values()] : [workflows.get(routeKey)].filter((w): w is Workflow => Boolean(w))).flatMap((w) => modelFiles(w.graph)))],
    check: createComfyUiCheck({ urls: opts.urls, dispatcher: clients.get(opts.urls[0]!)!.dispatcher }),
  };
}

const extOf = (mime: string) => ({ 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'video/mp4': 'mp4', 'video/webm': 'webm', 'video/quicktime': 'mov', 'audio/mpeg': 'mp3', 'audio/wav': 'wav' })[mime] ?? 'bin';
