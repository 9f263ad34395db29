import { createHash, randomUUID } from 'node:crypto';
import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { createProviderClient } from '../upstream-http.ts';
import { UpstreamError, attachedImages, type Engine, type EngineProgress, type UpstreamFile, type UpstreamRequest, type UpstreamStatus } from '../engine-contract.ts';
import { COMFYUI_OPERATIONS, fillGraph, loadWorkflow, workflowKeys, type Workflow } from './workflows.ts';
import { createProgressWatch, type ProgressWatch } from './comfyui-progress.ts';
import { createComfyUiCheck, modelFiles } from './comfyui-check.ts';
import { comfyServer, type ComfyLog, type ComfyServer } from './comfyui-server.ts';
import { comfyMessage, executionError, historyFailure, type HistoryEntry } from './comfyui-messages.ts';
import { INPUT_FOLDER, imageName, inputImage, inputMedia, inputsOf } from './comfyui-inputs.ts';
import { releasePrompt, type OutputFile } from './comfyui-release.ts';

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
 * node's own words, cut to one line (the whole answer goes to the log: comfyui-messages.ts). Inputs
 * are checked and re-encoded (comfyui-inputs.ts), uploaded with POST /upload/image as
 * input/adforge/<prompt id>-<slot>, and their names put into the load nodes the mapping names; when
 * the generation ends, release() empties them and the outputs and deletes the prompt's history
 * (comfyui-release.ts). ComfyUI has no authentication.
 */
export interface ComfyUiOptions {
  /** The servers' roots (COMFYUI_URL). */
  urls: readonly string[];
  /** The workflows folder (COMFYUI_WORKFLOWS). */
  workflowsDir: string;
  /** The ENGINE_ROUTES keys that send work to comfyui: each needs its workflow, checked at start. */
  routeKeys: readonly string[];
  allowPrivate: boolean;
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on every call's own timeout. */
  callTimeoutCapMs?: number;
  timeoutMs?: number;
  /** Follow each server's WebSocket for step progress (off in unit checks). */
  watchProgress?: boolean;
  /** Where ComfyUI's full answers go (the operator's log). */
  log?: ComfyLog;
}
const MAX_JSON_BYTES = 16 * 1024 * 1024;
const MAX_MEDIA_BYTES = 1024 * 1024 * 1024;
const VIDEO_EXT = /\.(mp4|webm|mkv|mov)$/i;

type HistoryFile = { filename: string; subfolder?: string; type?: string };

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

  // ComfyUI's error answers carry its model file lists and Python details: the log gets them whole, the user one line.
  const wordsOf = (json: unknown) => {
    opts.log?.warn({ comfyui_answer: json }, 'ComfyUI refused a request');
    return comfyMessage(json);
  };
  const clients = new Map(
    opts.urls.map((url) => [
      url,
      createProviderClient({ provider: 'ComfyUI', baseUrl: url, allowPrivate: opts.allowPrivate, callTimeoutCapMs: opts.callTimeoutCapMs, headers: { accept: 'application/json' }, timeoutMs: opts.timeoutMs ?? 120_000, maxBytes: MAX_JSON_BYTES, maxBinaryBytes: MAX_MEDIA_BYTES, message: wordsOf }),
    ]),
  );
  const servers = new Map(opts.urls.map((url) => [url, comfyServer(url, { dispatcher: clients.get(url)!.dispatcher, timeoutMs: Math.min(opts.timeoutMs ?? 120_000, opts.callTimeoutCapMs ?? Infinity), log: opts.log })]));
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

  /** POST /upload/image into input/adforge/, overwriting: the name it is given is the name LoadImage reads. */
  async function upload(url: string, file: { bytes: Buffer; mime: string; name: string }, signal: AbortSignal): Promise<string> {
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(file.bytes)], { type: file.mime }), file.name);
    form.append('type', 'input');
    form.append('subfolder', INPUT_FOLDER);
    form.append('overwrite', 'true');
    const j = await client(url).json('POST', '/upload/image', form, signal);
    if (typeof j?.name !== 'string') throw new UpstreamError('transient', 'ComfyUI answered the upload without a file name');
    return typeof j.subfolder === 'string' && j.subfolder ? `${j.subfolder}/${j.name}` : j.name;
  }

  /** An empty file over one the generation left (ComfyUI has no route that deletes a file: comfyui-release.ts). */
  async function blank(url: string, f: OutputFile, signal: AbortSignal): Promise<void> {
    const form = new FormData();
    form.append('image', new Blob([]), f.filename);
    form.append('type', f.type);
    form.append('subfolder', f.subfolder);
    form.append('overwrite', 'true');
    await client(url).json('POST', '/upload/image', form, signal);
  }

  const release = (url: string, job: { promptId: string; inputs: readonly string[] }, signal: AbortSignal, settleMs?: number) =>
    releasePrompt(server(url), (f, s) => blank(url, f, s), job, signal, settleMs);

  async function submit(req: UpstreamRequest, promptId: string, signal: AbortSignal) {
    const w = workflowFor(req.operation, req.params);
    if (!w) throw new UpstreamError('refused', `no ComfyUI workflow for ${req.operation}`);
    const handleOf = (url: string, inputs: readonly string[]) => ({ server: url, promptId, output: w.mapping.output, kind: w.mapping.kind, inputs });
    // A resend of an attempt whose answer was lost: the prompt is already on a server, never queued twice.
    const held = await holder(promptId, signal);
    if (held) return { providerJobId: promptId, handle: handleOf(held, await uploadedFor(held, promptId, w, signal)) };

    // Every input is read and checked before a server is asked anything.
    const i = req.inputs;
    const images = [i.face, i.firstFrame, i.lastFrame, ...attachedImages(i)].filter((f): f is UpstreamFile => Boolean(f));
    const slots = w.mapping.inputs.images;
    if (images.length < slots.length) throw new UpstreamError('refused', `the ComfyUI workflow for ${w.key} takes ${slots.length} input image(s); the request brings ${images.length}`);
    const files: Array<{ bytes: Buffer; mime: string; name: string; slot: 'image' | 'video' | 'audio' }> = [];
    for (const [n, file] of images.slice(0, slots.length).entries()) files.push({ bytes: await inputImage(file, signal), mime: 'image/png', name: imageName(promptId, n), slot: 'image' });
    for (const kind of ['video', 'audio'] as const) {
      if (!w.mapping.inputs[kind]) continue;
      const file = kind === 'video' ? i.video : i.speech;
      if (!file) throw new UpstreamError('refused', `the ComfyUI workflow for ${w.key} takes ${kind === 'video' ? 'a video' : 'audio'}; the request brings none`);
      const m = await inputMedia(file, kind, signal);
      files.push({ bytes: m.bytes, mime: m.mime, name: `${promptId}-${kind}.${m.ext}`, slot: kind });
    }

    const target = leastLoaded(await loads(signal));
    if (!target) throw new UpstreamError('transient', `no ComfyUI server answered (${opts.urls.join(', ')})`);
    const uploaded: string[] = [];
    let sent = false;
    try {
      for (const f of files) uploaded.push(await upload(target.url, f, signal));
      const named = (slot: string) => uploaded.filter((_, k) => files[k]!.slot === slot);
      const prompt = fillGraph(w, { prompt: i.prompt, params: req.params, seed: seedOf(req.generationId), images: named('image'), ...(named('video')[0] ? { video: named('video')[0] } : {}), ...(named('audio')[0] ? { audio: named('audio')[0] } : {}) });

      await watch?.ready(target.url, promptId);
      sent = true;
      const answer = await client(target.url)
        .json('POST', '/prompt', { prompt, prompt_id: promptId }, signal, { submit: true })
        .catch(async (e: unknown) => {
          // A lost answer, or a refusal such as a build's 409 for a prompt_id it already holds: it is queued if a server says so.
          if (e instanceof UpstreamError && (e.failure === 'unsent_unknown' || e.failure === 'refused')) {
            const at = await holder(promptId, signal).catch(() => undefined);
            if (at) return { prompt_id: promptId, node_errors: {} } as Record<string, unknown>;
            // A refusal that queued nothing: the inputs may go.
            if (e.failure === 'refused') sent = false;
          }
          throw e;
        });
      // A 200 with node_errors: validate_prompt dropped the outputs they name and queued the prompt
      // with the others, and it starts at once on an idle server (execution.py @ 04e2a91).
      const dropped = droppedOutputs(answer?.node_errors);
      if (dropped.has(w.mapping.output)) {
        opts.log?.warn({ comfyui: target.url, prompt_id: promptId, node_errors: answer?.node_errors }, `ComfyUI dropped the result node ${w.mapping.output} of the ${w.key} workflow; the prompt is ended there`);
        // Ended, then what it left removed, within a short wait for ComfyUI to write its history.
        await release(target.url, { promptId, inputs: uploaded }, signal, 5_000).catch((e: unknown) => opts.log?.warn({ err: e, comfyui: target.url, prompt_id: promptId }, 'a ComfyUI prompt without its result node could not be ended and removed'));
        throw new UpstreamError('refused', `ComfyUI refused the workflow: ${comfyMessage(answer) ?? `node ${w.mapping.output} did not validate`}`);
      }
      if (dropped.size) opts.log?.warn({ comfyui: target.url, prompt_id: promptId, node_errors: answer?.node_errors }, `ComfyUI dropped output node(s) ${[...dropped].join(', ')} of the ${w.key} workflow; its result node runs`);
      const id = typeof answer?.prompt_id === 'string' ? answer.prompt_id : promptId;
      return { providerJobId: id, handle: { ...handleOf(target.url, uploaded), promptId: id } };
    } catch (e) {
      // Nothing was queued: the inputs uploaded for it are emptied again (a submit that may have reached ComfyUI keeps them).
      if (!sent && uploaded.length) await Promise.all(uploaded.map((name) => blank(target.url, { filename: name.slice(INPUT_FOLDER.length + 1), subfolder: INPUT_FOLDER, type: 'input' }, signal).catch(() => {})));
      throw e;
    }
  }

  /** The inputs a prompt found on a server loads (its graph, where the server still holds it); the image names otherwise. */
  async function uploadedFor(url: string, promptId: string, w: Workflow, signal: AbortSignal): Promise<string[]> {
    const graph = await server(url).graphOf(promptId, signal).catch(() => undefined);
    return graph ? inputsOf(w.mapping, graph) : w.mapping.inputs.images.map((_, n) => `${INPUT_FOLDER}/${imageName(promptId, n)}`);
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
    if (failure) {
      opts.log?.warn({ comfyui: url, prompt_id: id, execution_error: executionError(entry) }, 'a ComfyUI prompt failed');
      return { state: 'failed', message: failure };
    }
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
    release: (handle, signal) => release(String(handle.server), { promptId: String(handle.promptId), inputs: Array.isArray(handle.inputs) ? handle.inputs.filter((n): n is string => typeof n === 'string') : [] }, signal),
    // The model files (`<models folder>/<file>`) the route key's workflow loads, for `adforge providers check`.
    targets: (routeKey) => [...new Set((routeKey === '*' ? [...workflows.values()] : [workflows.get(routeKey)].filter((w): w is Workflow => Boolean(w))).flatMap((w) => modelFiles(w.graph)))],
    check: createComfyUiCheck({ urls: opts.urls, dispatcher: clients.get(opts.urls[0]!)!.dispatcher }),
  };
}

