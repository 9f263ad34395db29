import http from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { checkAnswer, formFields, loadContract, requestProblems, type Contract } from './contract.ts';
import { closeServer, listenOnLoopback, readForm, readRaw, sendJson } from './http-fake.ts';

/*
 * A local ComfyUI server, following Comfy-Org/ComfyUI server.py @ 002c3fb (post_prompt,
 * get_history_prompt_id, get_queue, post_queue, post_interrupt, image_upload, view_image,
 * websocket_handler), execution.py @ 04e2a91 (validate_prompt: missing_node_type,
 * required_input_missing, bad_linked_input, prompt_no_outputs; PromptQueue; the execution
 * messages) and main.py @ 02018c7 (history status, progress), held to test/contracts/comfyui/:
 * every request is checked against its contract (a break is ComfyUI's 400 {error, node_errors}),
 * every JSON answer and WebSocket message against the contract too. Each graph is validated the
 * way validate_prompt does for the built-in nodes the shipped workflows use (their required
 * inputs, read from nodes.py and comfy_extras), links must point at nodes of the graph, a
 * LoadImage must name an uploaded file. Prompts queue and run one at a time: execution_start,
 * executing, `steps` progress messages, executed, execution_success, executing {node: null}; the
 * history then holds the output node's files, served by /view as real PNG or MP4 bytes. It can be
 * told to fail a node (execution_error), to hold the queue, to go down, and to lose a submit's answer.
 * GET /models/{folder} lists the model files it is given (404 for a folder it has none for).
 */

/** The required inputs of the built-in nodes the fake knows (nodes.py @ 02217e3, comfy_extras nodes_video/wan/hunyuan/model_advanced). */
export const COMFY_NODES: Readonly<Record<string, { required: readonly string[]; output?: 'image' | 'video' }>> = {
  CheckpointLoaderSimple: { required: ['ckpt_name'] },
  UNETLoader: { required: ['unet_name', 'weight_dtype'] },
  CLIPLoader: { required: ['clip_name', 'type'] },
  VAELoader: { required: ['vae_name'] },
  CLIPTextEncode: { required: ['text', 'clip'] },
  EmptyLatentImage: { required: ['width', 'height', 'batch_size'] },
  EmptyHunyuanLatentVideo: { required: ['width', 'height', 'length', 'batch_size'] },
  ModelSamplingSD3: { required: ['model', 'shift'] },
  KSampler: { required: ['model', 'seed', 'steps', 'cfg', 'sampler_name', 'scheduler', 'positive', 'negative', 'latent_image', 'denoise'] },
  VAEDecode: { required: ['samples', 'vae'] },
  VAEEncode: { required: ['pixels', 'vae'] },
  RepeatLatentBatch: { required: ['samples', 'amount'] },
  LoadImage: { required: ['image'] },
  ImageScale: { required: ['image', 'upscale_method', 'width', 'height', 'crop'] },
  CreateVideo: { required: ['images', 'fps'] },
  SaveImage: { required: ['images', 'filename_prefix'], output: 'image' },
  SaveVideo: { required: ['video', 'filename_prefix'], output: 'video' },
};

type Graph = Record<string, { class_type?: unknown; inputs?: Record<string, unknown> }>;
type NodeError = { errors: Array<{ type: string; message: string; details: string; extra_info: Record<string, unknown> }>; dependent_outputs: string[]; class_type: string };

/** validate_prompt's checks for a graph, as ComfyUI's 400 body; undefined when it holds. */
export function validateGraph(graph: Graph, uploaded: ReadonlySet<string> = new Set(), nodes = COMFY_NODES): Record<string, unknown> | undefined {
  for (const [id, node] of Object.entries(graph)) {
    const cls = typeof node.class_type === 'string' ? node.class_type : undefined;
    if (!cls || !nodes[cls]) {
      return { error: { type: 'missing_node_type', message: `Node '${cls ?? id}' not found. The custom node may not be installed.`, details: `Node ID '#${id}'`, extra_info: { node_id: id, class_type: cls ?? null } }, node_errors: {} };
    }
  }
  const outputs = Object.entries(graph).filter(([, n]) => nodes[String(n.class_type)]!.output).map(([id]) => id);
  if (!outputs.length) return { error: { type: 'prompt_no_outputs', message: 'Prompt has no outputs', details: '', extra_info: {} }, node_errors: {} };
  const nodeErrors: Record<string, NodeError> = {};
  for (const [id, node] of Object.entries(graph)) {
    const cls = String(node.class_type);
    const errors: NodeError['errors'] = [];
    const inputs = node.inputs ?? {};
    for (const name of nodes[cls]!.required) {
      if (!(name in inputs)) errors.push({ type: 'required_input_missing', message: 'Required input is missing', details: name, extra_info: { input_name: name } });
    }
    for (const [name, v] of Object.entries(inputs)) {
      if (Array.isArray(v) && (v.length !== 2 || typeof v[0] !== 'string' || !graph[v[0]])) {
        errors.push({ type: 'bad_linked_input', message: 'Bad linked input, must be a length-2 list of [string, int]', details: `${name}: links to ${JSON.stringify(v[0])}, not a node of the prompt`, extra_info: { input_name: name } });
      }
    }
    if (cls === 'LoadImage' && typeof inputs.image === 'string' && !uploaded.has(inputs.image)) {
      errors.push({ type: 'custom_validation_failed', message: 'Custom validation failed for node', details: `image - Invalid image file: ${inputs.image}`, extra_info: { input_name: 'image' } });
    }
    if (errors.length) nodeErrors[id] = { errors, dependent_outputs: outputs, class_type: cls };
  }
  if (Object.keys(nodeErrors).length) {
    const details = Object.values(nodeErrors).flatMap((n) => n.errors.map((e) => `${e.message}: ${e.details}`)).join('\n');
    return { error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation', details, extra_info: {} }, node_errors: nodeErrors };
  }
  return undefined;
}

export interface ComfyJob {
  promptId: string;
  number: number;
  /** The POST's client_id; adforge sends none (see BROADCAST_WITHOUT_CLIENT). */
  clientId?: string | undefined;
  graph: Graph;
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
  history: loadContract('comfyui', 'get-history'),
  queue: loadContract('comfyui', 'get-queue'),
  deleteQueue: loadContract('comfyui', 'post-queue'),
  interrupt: loadContract('comfyui', 'post-interrupt'),
  upload: loadContract('comfyui', 'upload-image'),
  view: loadContract('comfyui', 'get-view'),
  models: loadContract('comfyui', 'get-models'),
  ws: loadContract('comfyui', 'websocket'),
};

export async function startComfyFake(opts: { png: Buffer; mp4: Buffer; steps?: number; stepMs?: number; models?: Record<string, string[]> }) {
  const models = opts.models ?? {};
  const steps = opts.steps ?? 3;
  const stepMs = opts.stepMs ?? 30;
  const jobs = new Map<string, ComfyJob>();
  const history = new Map<string, Record<string, unknown>>();
  const uploads = new Map<string, Buffer>();
  const files = new Map<string, Buffer>();
  const sockets = new Map<string, WebSocket>();
  /** Every POST /prompt that reached the fake, its answer sent or lost. */
  const posts: Array<{ promptId: string; answered: boolean }> = [];
  const problems: string[] = [];
  let counter = 0;
  let held = false;
  let down = false;
  let loseNext = false;
  let stallNext = false;
  let nodeErrorsNext: Record<string, NodeError> | undefined;
  let failNext: { node?: string; message: string } | undefined;
  let interrupted: string | undefined;
  let running: ComfyJob | undefined;

  const answer = (res: http.ServerResponse, c: Contract, status: number, body: unknown) => {
    checkAnswer(c, status, body);
    sendJson(res, status, body);
  };
  const emit = (clientId: string | undefined, type: string, data: Record<string, unknown>) => {
    checkAnswer({ ...CONTRACTS.ws, responses: { '200': CONTRACTS.ws.responses[type]! } }, 200, data);
    const frame = JSON.stringify({ type, data });
    if (clientId) sockets.get(clientId)?.send(frame);
    else if (BROADCAST_WITHOUT_CLIENT.has(type)) for (const ws of sockets.values()) ws.send(frame);
  };
  const pending = () => [...jobs.values()].filter((j) => j.state === 'pending').sort((a, b) => a.number - b.number);
  const item = (j: ComfyJob) => [j.number, j.promptId, j.graph, { ...(j.clientId ? { client_id: j.clientId } : {}), create_time: Date.now() }, []];
  const queueStatus = () => emit(undefined, 'status', { status: { exec_info: { queue_remaining: pending().length + (running ? 1 : 0) } } });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function run(j: ComfyJob) {
    running = j;
    j.state = 'running';
    const id = j.promptId;
    const messages: Array<[string, Record<string, unknown>]> = [];
    const send = (type: string, data: Record<string, unknown>) => {
      messages.push([type, data]);
      emit(j.clientId, type, data);
    };
    send('execution_start', { prompt_id: id, timestamp: Date.now() });
    const order = Object.keys(j.graph);
    const sampler = order.find((n) => j.graph[n]!.class_type === 'KSampler') ?? order[0]!;
    const out: Record<string, unknown> = {};
    let error: Record<string, unknown> | undefined;
    for (const node of order) {
      const cls = String(j.graph[node]!.class_type);
      emit(j.clientId, 'executing', { node, display_node: node, prompt_id: id });
      if (node === sampler) {
        for (let k = 1; k <= steps && interrupted !== id; k++) {
          await sleep(stepMs);
          while (held && running === j && interrupted !== id) await sleep(10);
          emit(j.clientId, 'progress', { value: k, max: steps, prompt_id: id, node });
        }
      }
      if (interrupted === id) {
        send('execution_interrupted', { prompt_id: id, node_id: node, node_type: cls, executed: [], timestamp: Date.now() });
        break;
      }
      if (failNext && (!failNext.node || failNext.node === node || failNext.node === cls)) {
        error = { prompt_id: id, node_id: node, node_type: cls, executed: [], exception_message: failNext.message, exception_type: 'RuntimeError', traceback: ['Traceback (most recent call last):'], current_inputs: {}, current_outputs: {}, timestamp: Date.now() };
        failNext = undefined;
        send('execution_error', error);
        break;
      }
      const saver = COMFY_NODES[cls]?.output;
      if (saver) {
        const inputs = j.graph[node]!.inputs ?? {};
        const count = saver === 'image' ? batchOf(j.graph, node) : 1;
        const made = Array.from({ length: count }, (_, i) => {
          const filename = `${String(inputs.filename_prefix).split('/').pop()}_${String(++counter).padStart(5, '0')}_${i}.${saver === 'image' ? 'png' : 'mp4'}`;
          files.set(`adforge/${filename}`, saver === 'image' ? opts.png : opts.mp4);
          return { filename, subfolder: 'adforge', type: 'output' };
        });
        out[node] = saver === 'video' ? { images: made, animated: [true] } : { images: made };
        emit(j.clientId, 'executed', { node, display_node: node, output: out[node] as Record<string, unknown>, prompt_id: id });
      }
    }
    const ok = !error && interrupted !== id;
    if (ok) send('execution_success', { prompt_id: id, timestamp: Date.now() });
    history.set(id, { prompt: item(j), outputs: ok ? out : {}, status: { status_str: ok ? 'success' : 'error', completed: ok, messages }, meta: {} });
    j.state = 'done';
    running = undefined;
    interrupted = undefined;
    queueStatus();
    emit(j.clientId, 'executing', { node: null, prompt_id: id });
  }

  let pumping = false;
  async function pump() {
    if (pumping) return;
    pumping = true;
    try {
      for (let next = pending()[0]; next && !held; next = pending()[0]) await run(next);
    } finally {
      pumping = false;
    }
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
    const raw = await readRaw(req);
    const json = () => {
      try {
        return raw.length ? (JSON.parse(raw.toString('utf8')) as unknown) : undefined;
      } catch {
        return undefined;
      }
    };
    const refuse = (c: Contract, body: unknown, query?: Record<string, unknown>) => {
      const found = requestProblems(c, { headers: req.headers, body, ...(query ? { query } : {}) });
      if (!found.length) return false;
      problems.push(`${c.call}: ${found.map((p) => p.message).join('; ')}`);
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(found.map((p) => p.message).join('; '));
      return true;
    };

    if (req.method === 'POST' && url.pathname === '/prompt') {
      const body = json() as { prompt?: Graph; client_id?: string; prompt_id?: string } | undefined;
      const found = requestProblems(CONTRACTS.prompt, { body });
      if (found.length) {
        problems.push(`POST /prompt: ${found.map((p) => p.message).join('; ')}`);
        return answer(res, CONTRACTS.prompt, 400, { error: { type: 'invalid_prompt', message: found.map((p) => p.message).join('; '), details: '', extra_info: {} }, node_errors: {} });
      }
      const invalid = validateGraph(body!.prompt!, new Set(uploads.keys()));
      if (invalid) return answer(res, CONTRACTS.prompt, 400, invalid);
      const promptId = body!.prompt_id!;
      if (jobs.has(promptId)) {
        // A second POST of one prompt_id is counted (a resend that should never happen), answered as 5e14d797 answers it.
        posts.push({ promptId, answered: true });
        return sendJson(res, 409, { error: 'prompt_id already exists' });
      }
      const job: ComfyJob = { promptId, number: counter++, clientId: body!.client_id, graph: body!.prompt!, state: 'pending' };
      jobs.set(promptId, job);
      queueStatus();
      const lose = loseNext;
      const stall = stallNext;
      loseNext = false;
      stallNext = false;
      posts.push({ promptId, answered: !lose && !stall });
      if (lose) req.socket.destroy();
      else if (stall) return; // never answered: the caller dies waiting
      else answer(res, CONTRACTS.prompt, 200, { prompt_id: promptId, number: job.number, node_errors: nodeErrorsNext ?? {} });
      nodeErrorsNext = undefined;
      void pump();
      return;
    }
    const h = /^\/history\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && h) {
      const id = decodeURIComponent(h[1]!);
      const entry = history.get(id);
      return answer(res, CONTRACTS.history, 200, entry ? { [id]: entry } : {});
    }
    if (req.method === 'GET' && url.pathname === '/queue') {
      return answer(res, CONTRACTS.queue, 200, { queue_running: running ? [item(running)] : [], queue_pending: pending().map(item) });
    }
    if (req.method === 'POST' && url.pathname === '/queue') {
      const body = json() as { delete?: string[] } | undefined;
      if (refuse(CONTRACTS.deleteQueue, body)) return;
      for (const id of body?.delete ?? []) if (jobs.get(id)?.state === 'pending') jobs.delete(id);
      queueStatus();
      res.writeHead(200).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/interrupt') {
      const body = json() as { prompt_id?: string } | undefined;
      if (refuse(CONTRACTS.interrupt, body ?? {})) return;
      if (running && (!body?.prompt_id || body.prompt_id === running.promptId)) interrupted = running.promptId;
      res.writeHead(200).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/upload/image') {
      const form = await readForm(req, raw);
      const fields = await formFields(form);
      if (refuse(CONTRACTS.upload, fields)) return;
      const file = form.get('image') as File;
      const subfolder = String(fields.subfolder ?? '');
      uploads.set(subfolder ? `${subfolder}/${file.name}` : file.name, Buffer.from(await file.arrayBuffer()));
      return answer(res, CONTRACTS.upload, 200, { name: file.name, subfolder, type: String(fields.type ?? 'input') });
    }
    if (req.method === 'GET' && url.pathname === '/view') {
      const query = Object.fromEntries(url.searchParams);
      if (refuse(CONTRACTS.view, undefined, query)) return;
      const key = query.subfolder ? `${query.subfolder}/${query.filename}` : String(query.filename);
      const bytes = (query.type ?? 'output') === 'input' ? uploads.get(key) : files.get(key);
      if (!bytes) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': key.endsWith('.mp4') ? 'video/mp4' : 'image/png' });
      res.end(bytes);
      return;
    }
    const m = /^\/models\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && m) {
      const list = models[decodeURIComponent(m[1]!)];
      if (!list) return res.writeHead(404).end();
      return answer(res, CONTRACTS.models, 200, list);
    }
    res.writeHead(404).end();
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
      ws.send(JSON.stringify({ type: 'status', data: { status: { exec_info: { queue_remaining: pending().length + (running ? 1 : 0) } }, sid } }));
    });
  });

  const url = await listenOnLoopback(server);
  return {
    url,
    jobs,
    history,
    uploads,
    posts,
    /** Requests that broke their contract (each also refused). */
    problems,
    /** Prompts wait in the queue (and a running one stops between steps) until released. */
    hold: () => void (held = true),
    release: () => {
      held = false;
      void pump();
    },
    /** The next prompt fails at this node (an id or a class_type; any node when absent) with ComfyUI's execution_error. */
    failNext: (message: string, node?: string) => void (failNext = { message, ...(node ? { node } : {}) }),
    /** The next POST /prompt is queued, but its answer is lost (the connection is cut). */
    loseNextAnswer: () => void (loseNext = true),
    /** The next POST /prompt is queued and never answered (a worker killed while it waits). */
    stallNextAnswer: () => void (stallNext = true),
    /** The next prompt is queued, but answered with node errors (validate_prompt keeps a prompt when some output validates; the failed ones are dropped). */
    partlyInvalidNext: (node: string, classType: string, details: string) =>
      void (nodeErrorsNext = { [node]: { errors: [{ type: 'value_not_in_list', message: 'Value not in list', details, extra_info: {} }], dependent_outputs: [], class_type: classType } }),
    /** Every request is cut off (a server that is down), until up(). */
    goDown: () => {
      down = true;
      for (const ws of sockets.values()) ws.terminate();
    },
    up: () => void (down = false),
    /** Queue length as GET /queue counts it. */
    load: () => pending().length + (running ? 1 : 0),
    /** Adds a prompt of someone else's to the queue (load on this server). */
    occupy: (n: number) => {
      for (let i = 0; i < n; i++) {
        const promptId = crypto.randomUUID();
        jobs.set(promptId, { promptId, number: counter++, clientId: 'other', graph: {}, state: 'pending' });
      }
    },
    close: async () => {
      for (const ws of sockets.values()) ws.terminate();
      wss.close();
      await closeServer(server);
    },
  };
}

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
    for (const v of Object.values(n.inputs ?? {})) if (Array.isArray(v) && typeof v[0] === 'string') {
      const b = walk(v[0]);
      if (b > 1) return b;
    }
    return 1;
  };
  return walk(saver);
}
export type ComfyFake = Awaited<ReturnType<typeof startComfyFake>>;
