import http from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { checkAnswer, formFields, loadContract, requestProblems, type Contract } from './contract.ts';
import { closeServer, listenOnLoopback, readForm, readRaw, sendJson } from './http-fake.ts';
import { COMFY_NODES, executionOrder, validatePrompt, type Folders } from './comfyui-nodes.ts';

/*
 * A local ComfyUI server, as strict as the real one, held to test/contracts/comfyui/ (every request
 * is checked against its contract, every JSON answer and WebSocket message too). Read from
 * Comfy-Org/ComfyUI:
 * - server.py @ 5e14d797169e6417e1bd45082ff8d78cdc32b3c5 (the current build, 0.38.x): post_prompt
 *   (the number counted before validation; a prompt_id it already holds answered 409), GET /prompt
 *   (exec_info.queue_remaining: pending + running), get_queue (whole queue items: [number,
 *   prompt_id, prompt, extra_data, outputs_to_execute]), post_queue, post_interrupt (a prompt_id
 *   interrupts only that prompt when it runs; none, whatever runs), post_history ({delete},
 *   {clear}), GET /api/jobs and GET /api/jobs/{id} (comfy_execution/jobs.py @ 172be438: get_job,
 *   get_all_jobs, normalize_queue_item, normalize_history_item), POST /api/jobs/{id}/cancel
 *   (cancel_job: a running prompt interrupted at once and atomically, a pending one dequeued),
 *   image_upload (type input|output|temp, subfolder kept inside its folder, overwrite, else a
 *   renamed copy "name (1).ext" unless the bytes are the same), view_image, get_models,
 *   system_stats, websocket_handler; every route also under /api/;
 * - older builds, chosen with `build`: 0.3.64 (server.py @ a125cd84b054a57729b5eecab930ca9408719832,
 *   Oct 2025): no /api/jobs routes, a prompt_id queued again without a word; 0.3.50 (before
 *   464ba1d6, first released in 0.3.57): POST /interrupt ignores its body and interrupts whatever runs;
 * - execution.py @ 04e2a914334246661a77665aa14068a0670e3321: validate_prompt (see comfyui-nodes.ts):
 *   only output nodes and what they need are validated; when some outputs fail and others pass the
 *   prompt is queued with the good ones and answered 200 with `node_errors`; PromptExecutor: only
 *   the nodes the queued outputs need run; the history keeps the outputs of the nodes that ran
 *   before a failure or an interrupt; the interrupt flag is reset when a prompt starts;
 * - nodes.py @ a125cd84 SaveImage and folder_paths.get_save_image_path: files named
 *   `<prefix>_<counter:05>_.png`, the counter one past the highest already in that folder, one per
 *   image of the batch; PreviewImage into temp/ as `ComfyUI_temp_<5 letters>_<counter>_.png`;
 *   comfy_extras/nodes_video.py @ 39b885fa SaveVideo: `<prefix>_<counter:05>_.mp4` under `images`
 *   with `animated`; LoadImage opens its file with PIL when it runs (a file that is no image fails
 *   the prompt with PIL's words, the server's own path in them);
 * - main.py @ 02018c7eb5887b889ba26d0f5c43fc1041026e71 (history status, progress messages).
 * ComfyUI's input folder holds `example.png` (shipped in the repository's input/).
 * It can be told to fail a node (execution_error with a traceback), to hold the queue or a started
 * prompt, to go down, and to lose or never send a submit's answer. It counts the bytes each route
 * answered, so a test can hold adforge to bounded reads.
 */

export { COMFY_NODES } from './comfyui-nodes.ts';

export type ComfyBuild = 'current' | '0.3.64' | '0.3.50';
const BUILDS: Record<ComfyBuild, { version: string; jobsApi: boolean; targetedInterrupt: boolean; refusesDuplicateId: boolean }> = {
  current: { version: '0.38.1', jobsApi: true, targetedInterrupt: true, refusesDuplicateId: true },
  '0.3.64': { version: '0.3.64', jobsApi: false, targetedInterrupt: true, refusesDuplicateId: false },
  '0.3.50': { version: '0.3.50', jobsApi: false, targetedInterrupt: false, refusesDuplicateId: false },
};

/** The model folders folder_paths.py knows (GET /models/{folder} answers 404 for any other). */
const MODEL_FOLDERS = ['checkpoints', 'configs', 'loras', 'vae', 'text_encoders', 'diffusion_models', 'clip_vision', 'style_models', 'embeddings', 'diffusers', 'vae_approx', 'controlnet', 'gligen', 'upscale_models', 'hypernetworks', 'photomaker', 'classifiers', 'model_patches', 'audio_encoders'];

/** The model files of the shipped workflows: a server set up as docs/gpu.md says. */
export const SHIPPED_MODELS: Folders = {
  checkpoints: ['sd_xl_base_1.0.safetensors'],
  diffusion_models: ['wan2.1_t2v_1.3B_fp16.safetensors'],
  text_encoders: ['umt5_xxl_fp8_e4m3fn_scaled.safetensors'],
  vae: ['wan_2.1_vae.safetensors'],
};

/** Where ComfyUI runs, as its own messages name paths. */
const ROOT = '/opt/ComfyUI';

type Graph = Record<string, { class_type?: unknown; inputs?: Record<string, unknown>; _meta?: { title?: string } }>;

export interface ComfyJob {
  promptId: string;
  number: number;
  /** The POST's client_id; adforge sends none (see BROADCAST_WITHOUT_CLIENT). */
  clientId?: string | undefined;
  graph: Graph;
  /** The outputs validate_prompt let through (outputs_to_execute). */
  outputs: string[];
  extraData: Record<string, unknown>;
  state: 'pending' | 'running' | 'done';
}

/**
 * Where a message goes, as server.py and execution.py route it: `status` to every socket; a
 * prompt's messages to its client_id's socket, or, for a prompt queued without one, progress,
 * progress_state and execution_interrupted to every socket and the rest to none.
 */
const BROADCAST_WITHOUT_CLIENT = new Set(['status', 'progress', 'progress_state', 'execution_interrupted']);

const CONTRACTS = {
  prompt: loadContract('comfyui', 'post-prompt'),
  queueInfo: loadContract('comfyui', 'get-prompt'),
  history: loadContract('comfyui', 'get-history'),
  deleteHistory: loadContract('comfyui', 'post-history'),
  queue: loadContract('comfyui', 'get-queue'),
  deleteQueue: loadContract('comfyui', 'post-queue'),
  interrupt: loadContract('comfyui', 'post-interrupt'),
  job: loadContract('comfyui', 'get-job'),
  jobs: loadContract('comfyui', 'get-jobs'),
  cancelJob: loadContract('comfyui', 'post-job-cancel'),
  upload: loadContract('comfyui', 'upload-image'),
  view: loadContract('comfyui', 'get-view'),
  models: loadContract('comfyui', 'get-models'),
  stats: loadContract('comfyui', 'get-system-stats'),
  ws: loadContract('comfyui', 'websocket'),
};

/** PIL opens these (by their first bytes); anything else is UnidentifiedImageError. */
const isImage = (b: Buffer) =>
  b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) ||
  (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) ||
  b.subarray(0, 4).toString('latin1') === 'GIF8' ||
  (b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP');

const CONTENT_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.mp4': 'video/mp4', '.webm': 'video/webm', '.mp3': 'audio/mpeg', '.wav': 'audio/x-wav' };

export async function startComfyFake(opts: { png: Buffer; mp4: Buffer; steps?: number; stepMs?: number; models?: Folders; build?: ComfyBuild }) {
  const build = BUILDS[opts.build ?? 'current'];
  const folders: Folders = opts.models ?? SHIPPED_MODELS;
  const steps = opts.steps ?? 3;
  const stepMs = opts.stepMs ?? 30;
  /** Every prompt accepted, by id (the first, for an id a legacy build queued twice), until it is dequeued. */
  const jobs = new Map<string, ComfyJob>();
  const queue: ComfyJob[] = [];
  const history = new Map<string, Record<string, unknown>>();
  /** The folders, by path inside each: input/ (uploads), output/ and temp/. */
  const disk = { input: new Map<string, Buffer>([['example.png', opts.png]]), output: new Map<string, Buffer>(), temp: new Map<string, Buffer>() };
  const sockets = new Map<string, WebSocket>();
  /** Every POST /prompt that reached the fake, its answer sent or lost. */
  const posts: Array<{ promptId: string; answered: boolean }> = [];
  /** The prompts that ended interrupted. */
  const interrupted: string[] = [];
  /** Every file uploaded, as it was received (a later upload may overwrite it on disk). */
  const received: Array<{ type: string; path: string; bytes: Buffer }> = [];
  /** Bytes answered, by route (`GET /queue`, `GET /history/{id}`...). */
  const served = new Map<string, number>();
  const problems: string[] = [];
  let number = 0;
  let held = false;
  let pausedAtStart = false;
  let down = false;
  let loseNext = false;
  let stallNext = false;
  let failNext: { node?: string; message: string; type: string } | undefined;
  /** nodes.interrupt_processing(): seen by the running prompt at its next check, reset when a prompt starts. */
  let interruptFlag = false;
  let running: ComfyJob | undefined;

  const count = (route: string, bytes: number) => served.set(route, (served.get(route) ?? 0) + bytes);
  const json = (res: http.ServerResponse, route: string, c: Contract | undefined, status: number, body: unknown) => {
    if (c) checkAnswer(c, status, body);
    count(route, Buffer.byteLength(JSON.stringify(body)));
    sendJson(res, status, body);
  };
  const emit = (clientId: string | undefined, type: string, data: Record<string, unknown>) => {
    checkAnswer({ ...CONTRACTS.ws, responses: { '200': CONTRACTS.ws.responses[type]! } }, 200, data);
    const frame = JSON.stringify({ type, data });
    if (clientId) sockets.get(clientId)?.send(frame);
    else if (BROADCAST_WITHOUT_CLIENT.has(type)) for (const ws of sockets.values()) ws.send(frame);
  };
  const pending = () => queue.slice().sort((a, b) => a.number - b.number);
  const remaining = () => queue.length + (running ? 1 : 0);
  const item = (j: ComfyJob) => [j.number, j.promptId, j.graph, j.extraData, j.outputs];
  const queueStatus = () => emit(undefined, 'status', { status: { exec_info: { queue_remaining: remaining() } } });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const dequeue = (id: string) => {
    const at = queue.findIndex((j) => j.promptId === id);
    if (at < 0) return false;
    queue.splice(at, 1);
    if (!queue.some((j) => j.promptId === id) && jobs.get(id)?.state === 'pending') jobs.delete(id);
    queueStatus();
    return true;
  };

  /** folder_paths.get_save_image_path: the next counter for `<subfolder>/<name>_NNNNN_` in a folder. */
  function nextCounter(folder: Map<string, Buffer>, subfolder: string, name: string): number {
    let max = 0;
    for (const key of folder.keys()) {
      if (path.posix.dirname(key) !== (subfolder || '.')) continue;
      const m = /^(.*)_(\d+)_/.exec(path.posix.basename(key));
      if (m && m[1] === name) max = Math.max(max, Number(m[2]));
    }
    return max + 1;
  }

  async function run(j: ComfyJob) {
    running = j;
    j.state = 'running';
    interruptFlag = false;
    const id = j.promptId;
    const messages: Array<[string, Record<string, unknown>]> = [];
    const note = (type: string, data: Record<string, unknown>, broadcast: boolean) => {
      const stamped = { ...data, timestamp: Date.now() };
      messages.push([type, stamped]);
      if (j.clientId || broadcast) emit(j.clientId, type, stamped);
    };
    note('execution_start', { prompt_id: id }, false);
    note('execution_cached', { nodes: [], prompt_id: id }, false);
    while (pausedAtStart && !interruptFlag) await sleep(10);
    const order = executionOrder(j.graph, j.outputs);
    const outputs: Record<string, unknown> = {};
    const meta: Record<string, unknown> = {};
    const executed: string[] = [];
    let end: 'success' | 'error' | 'interrupted' = 'success';
    for (const node of order) {
      const cls = String(j.graph[node]!.class_type);
      const inputs = j.graph[node]!.inputs ?? {};
      if (interruptFlag) {
        end = 'interrupted';
        note('execution_interrupted', { prompt_id: id, node_id: node, node_type: cls, executed: [...executed] }, true);
        break;
      }
      if (j.clientId) emit(j.clientId, 'executing', { node, display_node: node, prompt_id: id });
      if (cls === 'KSampler') {
        for (let k = 1; k <= steps && !interruptFlag; k++) {
          await sleep(stepMs);
          while (held && !interruptFlag) await sleep(10);
          emit(j.clientId, 'progress', { value: k, max: steps, prompt_id: id, node });
        }
        if (interruptFlag) {
          end = 'interrupted';
          note('execution_interrupted', { prompt_id: id, node_id: node, node_type: cls, executed: [...executed] }, true);
          break;
        }
      }
      let error: { message: string; type: string } | undefined;
      if (failNext && (!failNext.node || failNext.node === node || failNext.node === cls)) {
        error = failNext;
        failNext = undefined;
      } else if (cls === 'LoadImage') {
        const bytes = disk.input.get(String(inputs.image));
        if (!bytes || !isImage(bytes)) error = { type: 'PIL.UnidentifiedImageError', message: `cannot identify image file '${ROOT}/input/${String(inputs.image)}'` };
      }
      if (error) {
        end = 'error';
        note('execution_error', {
          prompt_id: id,
          node_id: node,
          node_type: cls,
          executed: [...executed],
          exception_message: error.message,
          exception_type: error.type,
          traceback: [`  File "${ROOT}/execution.py", line 496, in execute\n    output_data, output_ui, has_subgraph, has_pending_tasks = await get_output_data(...)\n`, `  File "${ROOT}/nodes.py", line 1640, in ${cls}\n`],
          current_inputs: {},
          current_outputs: [],
        }, false);
        break;
      }
      const saver = COMFY_NODES[cls]?.output;
      if (saver) {
        const made = saver === 'video' ? saveVideo(inputs) : saveImages(inputs, batchOf(j.graph, node), saver === 'preview');
        outputs[node] = saver === 'video' ? { images: made, animated: [true] } : { images: made };
        meta[node] = { node_id: node, display_node: node, parent_node: null, real_node_id: node };
        if (j.clientId) emit(j.clientId, 'executed', { node, display_node: node, output: outputs[node] as Record<string, unknown>, prompt_id: id });
      }
      executed.push(node);
    }
    if (end === 'success') note('execution_success', { prompt_id: id }, false);
    if (end === 'interrupted') interrupted.push(id);
    history.set(id, { prompt: item(j), outputs, status: { status_str: end === 'success' ? 'success' : 'error', completed: end === 'success', messages }, meta });
    j.state = 'done';
    running = undefined;
    queueStatus();
    emit(j.clientId, 'executing', { node: null, prompt_id: id });
  }

  function saveImages(inputs: Record<string, unknown>, batch: number, preview: boolean) {
    const folder = preview ? disk.temp : disk.output;
    const prefix = preview ? `ComfyUI_temp_${Array.from({ length: 5 }, () => 'abcdefghijklmnopqrstupvxyz'[Math.floor(Math.random() * 26)]).join('')}` : String(inputs.filename_prefix);
    const subfolder = path.posix.dirname(path.posix.normalize(prefix)).replace(/^\.$/, '');
    const name = path.posix.basename(prefix);
    let counter = nextCounter(folder, subfolder, name);
    return Array.from({ length: batch }, (_, b) => {
      const filename = `${name.replaceAll('%batch_num%', String(b))}_${String(counter++).padStart(5, '0')}_.png`;
      folder.set(subfolder ? `${subfolder}/${filename}` : filename, opts.png);
      return { filename, subfolder, type: preview ? 'temp' : 'output' };
    });
  }

  function saveVideo(inputs: Record<string, unknown>) {
    const prefix = String(inputs.filename_prefix);
    const subfolder = path.posix.dirname(path.posix.normalize(prefix)).replace(/^\.$/, '');
    const name = path.posix.basename(prefix);
    const format = String(inputs.format);
    const ext = format === 'webm' || (format === 'auto' && inputs['format.codec'] === 'av1') ? 'webm' : format === 'mkv' ? 'mkv' : 'mp4';
    const filename = `${name}_${String(nextCounter(disk.output, subfolder, name)).padStart(5, '0')}_.${ext}`;
    disk.output.set(subfolder ? `${subfolder}/${filename}` : filename, opts.mp4);
    return [{ filename, subfolder, type: 'output' }];
  }

  let pumping = false;
  async function pump() {
    if (pumping) return;
    pumping = true;
    try {
      for (let next = pending()[0]; next && !held; next = pending()[0]) {
        queue.splice(queue.indexOf(next), 1);
        await run(next);
      }
    } finally {
      pumping = false;
    }
  }

  /** comfy_execution/jobs.py: a job as GET /api/jobs/{id} answers it (with its workflow and outputs), or as the list does. */
  function jobView(id: string, detail: boolean): Record<string, unknown> | undefined {
    const h = history.get(id) as { prompt: unknown[]; outputs: Record<string, unknown>; status: { status_str: string; messages: Array<[string, Record<string, unknown>]> } } | undefined;
    if (h) {
      const [priority, , prompt, extraData] = h.prompt as [number, string, unknown, Record<string, unknown>];
      const at = (t: string) => h.status.messages.find(([m]) => m === t)?.[1];
      const end = at('execution_success') ?? at('execution_error') ?? at('execution_interrupted');
      const count = Object.values(h.outputs).reduce<number>((n, o) => n + ((o as { images?: unknown[] }).images?.length ?? 0), 0);
      return prune({
        id,
        status: h.status.status_str === 'success' ? 'completed' : at('execution_interrupted') ? 'cancelled' : 'failed',
        priority,
        create_time: extraData.create_time,
        execution_start_time: at('execution_start')?.timestamp,
        execution_end_time: end?.timestamp,
        execution_error: at('execution_error'),
        outputs_count: count,
        previewable_outputs_count: count,
        ...(detail ? { outputs: h.outputs, execution_status: h.status, workflow: { prompt, extra_data: extraData } } : {}),
      });
    }
    const j = running?.promptId === id ? running : queue.find((q) => q.promptId === id);
    if (!j) return undefined;
    return prune({
      id,
      status: j === running ? 'in_progress' : 'pending',
      priority: j.number,
      create_time: j.extraData.create_time,
      outputs_count: 0,
      previewable_outputs_count: 0,
      ...(detail ? { workflow: { prompt: j.graph, extra_data: j.extraData } } : {}),
    });
  }

  const server = http.createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      problems.push(String(e));
      if (!res.headersSent) sendJson(res, 500, { error: String(e) });
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    if (down) {
      req.socket.destroy();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    // server.py add_routes: every route is served as it is and under /api/; /api/jobs is its own route.
    let p = url.pathname;
    const jobsRoute = /^\/api\/jobs(\/|$)/.test(p);
    if (!jobsRoute && p.startsWith('/api/')) p = p.slice(4);
    const raw = await readRaw(req);
    const body = () => {
      try {
        return raw.length ? (JSON.parse(raw.toString('utf8')) as unknown) : undefined;
      } catch {
        return undefined;
      }
    };
    const query = Object.fromEntries(url.searchParams);
    /** A request outside its contract: recorded (the test fails) and refused as ComfyUI would. */
    const broken = (c: Contract, r: { body?: unknown; query?: Record<string, unknown> }) => {
      const found = requestProblems(c, r);
      if (!found.length) return false;
      problems.push(`${c.call}: ${found.map((x) => x.message).join('; ')}`);
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(found.map((x) => x.message).join('; '));
      return true;
    };

    if (req.method === 'POST' && p === '/prompt') {
      const b = body() as { prompt?: Graph; client_id?: string; prompt_id?: string } | undefined;
      const promptNumber = number++;
      const found = requestProblems(CONTRACTS.prompt, { body: b });
      if (found.length) {
        problems.push(`POST /prompt: ${found.map((x) => x.message).join('; ')}`);
        return json(res, 'POST /prompt', CONTRACTS.prompt, 400, { error: { type: 'invalid_prompt', message: found.map((x) => x.message).join('; '), details: '', extra_info: {} }, node_errors: {} });
      }
      const v = validatePrompt(b!.prompt!, { folders: { ...folders, input: [...disk.input.keys()].filter((k) => !k.includes('/')) }, inputFiles: new Set(disk.input.keys()) });
      if (!v.ok) return json(res, 'POST /prompt', CONTRACTS.prompt, 400, { error: v.error, node_errors: v.nodeErrors });
      const promptId = b!.prompt_id!;
      if (build.refusesDuplicateId && (jobs.has(promptId) || history.has(promptId))) {
        posts.push({ promptId, answered: true });
        return json(res, 'POST /prompt', CONTRACTS.prompt, 409, { error: 'prompt_id already exists' });
      }
      const job: ComfyJob = { promptId, number: promptNumber, clientId: b!.client_id, graph: b!.prompt!, outputs: v.outputs, extraData: { ...(b!.client_id ? { client_id: b!.client_id } : {}), create_time: Date.now() }, state: 'pending' };
      if (!jobs.has(promptId)) jobs.set(promptId, job);
      queue.push(job);
      queueStatus();
      const lose = loseNext;
      const stall = stallNext;
      loseNext = false;
      stallNext = false;
      posts.push({ promptId, answered: !lose && !stall });
      if (lose) req.socket.destroy();
      else if (!stall) json(res, 'POST /prompt', CONTRACTS.prompt, 200, { prompt_id: promptId, number: job.number, node_errors: v.nodeErrors });
      void pump();
      return;
    }
    if (req.method === 'GET' && p === '/prompt') return json(res, 'GET /prompt', CONTRACTS.queueInfo, 200, { exec_info: { queue_remaining: remaining() } });
    const h = /^\/history\/([^/]+)$/.exec(p);
    if (req.method === 'GET' && h) {
      const id = decodeURIComponent(h[1]!);
      const entry = history.get(id);
      return json(res, 'GET /history/{id}', CONTRACTS.history, 200, entry ? { [id]: entry } : {});
    }
    if (req.method === 'POST' && p === '/history') {
      const b = body() as { delete?: string[]; clear?: boolean } | undefined;
      if (broken(CONTRACTS.deleteHistory, { body: b })) return;
      if (b?.clear) history.clear();
      for (const id of b?.delete ?? []) history.delete(id);
      return res.writeHead(200).end();
    }
    if (req.method === 'GET' && p === '/queue') {
      return json(res, 'GET /queue', CONTRACTS.queue, 200, { queue_running: running ? [item(running)] : [], queue_pending: queue.map(item) });
    }
    if (req.method === 'POST' && p === '/queue') {
      const b = body() as { delete?: string[]; clear?: boolean } | undefined;
      if (broken(CONTRACTS.deleteQueue, { body: b })) return;
      if (b?.clear) for (const j of [...queue]) dequeue(j.promptId);
      for (const id of b?.delete ?? []) dequeue(id);
      return res.writeHead(200).end();
    }
    if (req.method === 'POST' && p === '/interrupt') {
      const b = (body() ?? {}) as { prompt_id?: string };
      if (broken(CONTRACTS.interrupt, { body: b })) return;
      if (!build.targetedInterrupt || !b.prompt_id || running?.promptId === b.prompt_id) interruptFlag = true;
      return res.writeHead(200).end();
    }
    if (jobsRoute && build.jobsApi) {
      const one = /^\/api\/jobs\/([^/]+)$/.exec(p);
      const cancel = /^\/api\/jobs\/([^/]+)\/cancel$/.exec(p);
      if (req.method === 'GET' && p === '/api/jobs') {
        if (broken(CONTRACTS.jobs, { query })) return;
        const statuses = (query.status ?? 'pending,in_progress,completed,failed,cancelled').split(',').map((s) => s.trim());
        const all = [...(running ? [running.promptId] : []), ...queue.map((j) => j.promptId), ...history.keys()]
          .map((id) => jobView(id, false)!)
          .filter((j) => statuses.includes(String(j.status)))
          .sort((x, y) => (Number(x.create_time) - Number(y.create_time)) * (query.sort_order === 'asc' ? 1 : -1));
        const offset = Math.max(0, Number(query.offset ?? 0));
        const limit = query.limit ? Number(query.limit) : undefined;
        const page = all.slice(offset, limit ? offset + limit : undefined);
        return json(res, 'GET /api/jobs', CONTRACTS.jobs, 200, { jobs: page, pagination: { offset, limit: limit ?? null, total: all.length, has_more: offset + page.length < all.length } });
      }
      if (req.method === 'GET' && one) {
        const job = jobView(decodeURIComponent(one[1]!), true);
        return job ? json(res, 'GET /api/jobs/{id}', CONTRACTS.job, 200, job) : json(res, 'GET /api/jobs/{id}', CONTRACTS.job, 404, { error: 'Job not found' });
      }
      if (req.method === 'POST' && cancel) {
        const id = decodeURIComponent(cancel[1]!);
        let cancelled = false;
        if (running?.promptId === id) cancelled = interruptFlag = true;
        else cancelled = dequeue(id);
        return json(res, 'POST /api/jobs/{id}/cancel', CONTRACTS.cancelJob, 200, { cancelled });
      }
    }
    if (req.method === 'POST' && p === '/upload/image') {
      const form = await readForm(req, raw);
      const fields = await formFields(form);
      if (broken(CONTRACTS.upload, { body: fields })) return;
      const file = form.get('image') as File;
      const type = String(fields.type ?? 'input') as 'input' | 'output' | 'temp';
      const subfolder = String(fields.subfolder ?? '');
      const folder = disk[type];
      const bytes = Buffer.from(await file.arrayBuffer());
      if (path.posix.isAbsolute(subfolder) || path.posix.normalize(`${subfolder}/${file.name}`).startsWith('..')) return res.writeHead(400).end();
      const at = (name: string) => (subfolder ? `${path.posix.normalize(subfolder)}/${name}` : name);
      let name = file.name;
      if (!['true', '1'].includes(String(fields.overwrite))) {
        const ext = path.posix.extname(file.name);
        for (let i = 1; folder.has(at(name)) && !folder.get(at(name))!.equals(bytes); i++) name = `${file.name.slice(0, file.name.length - ext.length)} (${i})${ext}`;
      }
      folder.set(at(name), bytes);
      received.push({ type, path: at(name), bytes });
      return json(res, 'POST /upload/image', CONTRACTS.upload, 200, { name, subfolder, type });
    }
    if (req.method === 'GET' && p === '/view') {
      if (broken(CONTRACTS.view, { query })) return;
      const name = String(query.filename);
      if (name.startsWith('/') || name.includes('..')) return res.writeHead(400).end();
      const folder = disk[(query.type ?? 'output') as 'input' | 'output' | 'temp'];
      if (!folder) return res.writeHead(400).end();
      const bytes = folder.get(query.subfolder ? `${query.subfolder}/${path.posix.basename(name)}` : path.posix.basename(name));
      if (!bytes) return res.writeHead(404).end();
      count('GET /view', bytes.length);
      res.writeHead(200, { 'content-type': CONTENT_TYPES[path.posix.extname(name)] ?? 'application/octet-stream' });
      return res.end(bytes);
    }
    const m = /^\/models\/([^/]+)$/.exec(p);
    if (req.method === 'GET' && m) {
      const folder = decodeURIComponent(m[1]!);
      if (!MODEL_FOLDERS.includes(folder)) return res.writeHead(404).end();
      return json(res, 'GET /models/{folder}', CONTRACTS.models, 200, folders[folder] ?? []);
    }
    if (req.method === 'GET' && p === '/system_stats') {
      return json(res, 'GET /system_stats', CONTRACTS.stats, 200, { system: { os: 'posix', ram_total: 68719476736, ram_free: 34359738368, comfyui_version: build.version, python_version: '3.12.3', pytorch_version: '2.8.0+cu128', embedded_python: false, argv: ['main.py', '--listen', '0.0.0.0'] }, devices: [] });
    }
    // aiohttp's static route for / answers anything else: 404 for a GET, 405 for another method.
    res.writeHead(req.method === 'GET' ? 404 : 405, { 'content-type': 'text/plain' }).end(req.method === 'GET' ? '404: Not Found' : '405: Method Not Allowed');
  }

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket: Socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    if (down || url.pathname !== '/ws' || requestProblems(CONTRACTS.ws, { query }).length) return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => {
      const sid = query.clientId!;
      sockets.get(sid)?.close();
      sockets.set(sid, ws);
      ws.on('close', () => sockets.get(sid) === ws && sockets.delete(sid));
      ws.send(JSON.stringify({ type: 'status', data: { status: { exec_info: { queue_remaining: remaining() } }, sid } }));
    });
  });

  const url = await listenOnLoopback(server);
  return {
    url,
    jobs,
    history,
    /** input/ by path inside it (`adforge/<name>`), `example.png` included. */
    uploads: disk.input,
    /** output/ by path inside it (`adforge/text-to-image_00001_.png`). */
    files: disk.output,
    temp: disk.temp,
    posts,
    interrupted,
    received,
    served,
    /** Requests that broke their contract (each also refused). */
    problems,
    /** Prompts wait in the queue (and a running one stops between sampler steps) until released. */
    hold: () => void (held = true),
    /** A prompt that starts waits before its first node until released (it is running all the while). */
    pauseAtStart: () => void (pausedAtStart = true),
    release: () => {
      held = false;
      pausedAtStart = false;
      void pump();
    },
    /** The next prompt fails at this node (an id or a class_type; any node when absent) with ComfyUI's execution_error. */
    failNext: (message: string, node?: string, type = 'RuntimeError') => void (failNext = { message, type, ...(node ? { node } : {}) }),
    /** The next POST /prompt is queued, but its answer is lost (the connection is cut). */
    loseNextAnswer: () => void (loseNext = true),
    /** The next POST /prompt is queued and never answered (a worker killed while it waits). */
    stallNextAnswer: () => void (stallNext = true),
    /** Every request is cut off (a server that is down), until up(). */
    goDown: () => {
      down = true;
      for (const ws of sockets.values()) ws.terminate();
    },
    up: () => void (down = false),
    /** A restart: the queue and the history are in memory (execution.py PromptQueue), so both are gone; the files stay. */
    restart: () => {
      queue.length = 0;
      history.clear();
      jobs.clear();
      if (running) interruptFlag = true;
    },
    /** Queue length as GET /prompt counts it. */
    load: remaining,
    /**
     * Adds prompts of someone else's to the queue, queued from ComfyUI's browser page: their
     * extra_data carries the page's whole workflow (extra_pnginfo), `workflowBytes` of it each.
     */
    occupy: (n: number, workflowBytes = 2_000) => {
      const workflow = { id: crypto.randomUUID(), nodes: [{ id: 1, type: 'Note', widgets_values: ['x'.repeat(workflowBytes)] }], links: [], version: 0.4 };
      for (let i = 0; i < n; i++) {
        const promptId = crypto.randomUUID();
        const job: ComfyJob = { promptId, number: number++, clientId: 'browser', graph: {}, outputs: [], extraData: { extra_pnginfo: { workflow }, client_id: 'browser', create_time: Date.now() }, state: 'pending' };
        jobs.set(promptId, job);
        queue.push(job);
      }
    },
    close: async () => {
      for (const ws of sockets.values()) ws.terminate();
      wss.close();
      await closeServer(server);
    },
  };
}

/** jobs.py prune_dict: fields without a value are left out. */
const prune = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

/** How many images a saver gets: the batch of the latent it decodes (EmptyLatentImage.batch_size or RepeatLatentBatch.amount), 1 when not found. */
function batchOf(graph: Graph, saver: string): number {
  const seen = new Set<string>();
  const walk = (id: string): number => {
    if (seen.has(id)) return 1;
    seen.add(id);
    const n = graph[id];
    if (!n) return 1;
    if (n.class_type === 'EmptyLatentImage') return Number(n.inputs?.batch_size ?? 1);
    if (n.class_type === 'RepeatLatentBatch') return Number(n.inputs?.amount ?? 1);
    for (const v of Object.values(n.inputs ?? {})) {
      if (!Array.isArray(v) || typeof v[0] !== 'string') continue;
      const b = walk(v[0]);
      if (b > 1) return b;
    }
    return 1;
  };
  return walk(saver);
}
export type ComfyFake = Awaited<ReturnType<typeof startComfyFake>>;
