import { request, type Dispatcher } from 'undici';
import { SpanKind, inSpan } from '../../../observability/tracing.ts';
import { jsonOrUndefined, readAtMost } from '../../net/read-at-most.ts';
import { UpstreamError } from '../engine-contract.ts';
import type { HistoryEntry } from './comfyui-messages.ts';
import type { Graph } from './workflows.ts';

/*
 * The reads and writes of one ComfyUI server that concern one prompt, each bounded by what that
 * prompt is, never by what the server's queue holds (Comfy-Org/ComfyUI server.py @ 5e14d797):
 * GET /prompt (the queue's length), GET /history/{id}, GET /api/jobs/{id} (one prompt, queued,
 * running or ended; comfy_execution/jobs.py @ 172be438 get_job), a page of GET /api/jobs (the
 * pending prompts, no graphs), POST /api/jobs/{id}/cancel, POST /history {delete}, POST
 * /upload/image over a file. GET /queue answers every queued prompt whole, graph and extra_data
 * (a prompt queued from ComfyUI's browser page carries the page's whole workflow, often 100-500 KB),
 * so it is read only where a build offers nothing else (see holds()).
 * Builds before the jobs API (0.3.64, Oct 2025, server.py @ a125cd84) answer /api/jobs with a 404
 * that is not the route's JSON: the server is then asked with GET /prompt and GET /history alone.
 */

export interface ComfyLog {
  warn(obj: object, msg: string): void;
}

/** Where a prompt stands on its server. */
export type Whereabouts =
  | { state: 'ended'; entry: HistoryEntry }
  | { state: 'pending'; position?: number; behind?: number }
  | { state: 'running' }
  | { state: 'unknown' }
  /** A build without the jobs API: the prompt is not in the history and `remaining` prompts are queued or running; ours may be one of them. */
  | { state: 'somewhere'; remaining: number };

/** A page of pending prompts, oldest first: enough to place ours, small whatever the queue holds (about 200 bytes each). */
const PAGE = 100;
const SMALL_BYTES = 1024 * 1024;
/** A history entry or a job: our own graph and the names of its outputs. */
const ENTRY_BYTES = 8 * 1024 * 1024;
/** The whole queue, read only on builds without the jobs API. */
const QUEUE_BYTES = 16 * 1024 * 1024;
/** POST /interrupt honours its prompt_id from 0.3.57 (464ba1d6, 2025-09-02); before, it stops whatever runs. */
const TARGETED_INTERRUPT = [0, 3, 57];
const REMEMBER_MS = 10 * 60 * 1000;

export const atLeast = (version: string, wanted: readonly number[]): boolean => {
  const parts = version.split(/[.+-]/).map((p) => Number.parseInt(p, 10));
  for (let i = 0; i < wanted.length; i++) {
    const v = Number.isFinite(parts[i]) ? parts[i]! : 0;
    if (v !== wanted[i]) return v > wanted[i]!;
  }
  return true;
};

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

export function comfyServer(url: string, o: { dispatcher: Dispatcher; timeoutMs: number; log?: ComfyLog | undefined }) {
  /** Whether this server has the jobs API and honours a targeted interrupt, as last seen. */
  let jobsApi: { has: boolean; at: number } | undefined;
  let targeted: { has: boolean; at: number } | undefined;
  const fresh = (k: { at: number } | undefined) => k && Date.now() - k.at < REMEMBER_MS;

  /** One call, its status and JSON; a server that cannot be reached or answers too much is a passing failure. */
  async function ask(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal, maxBytes = SMALL_BYTES): Promise<{ status: number; json: unknown }> {
    const attributes = { 'adforge.provider': 'ComfyUI', 'http.request.method': method, 'server.address': new URL(url).host, 'url.path': path.split('?')[0]! };
    return inSpan(`ComfyUI ${method}`, attributes, async (span) => {
      try {
        const res = await request(`${url}${path}`, {
          method,
          dispatcher: o.dispatcher,
          signal: AbortSignal.any([signal, AbortSignal.timeout(o.timeoutMs)]),
          headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        span.setAttribute('http.response.status_code', res.statusCode);
        const raw = await readAtMost(res.body, maxBytes, () => new UpstreamError('transient', `the ComfyUI server ${url} answered ${method} ${path.split('?')[0]} with more than ${maxBytes} bytes`));
        if (res.statusCode >= 500) throw new UpstreamError('transient', `the ComfyUI server ${url} answered ${res.statusCode}`);
        return { status: res.statusCode, json: jsonOrUndefined(raw) };
      } catch (e) {
        if (e instanceof UpstreamError) throw e;
        throw new UpstreamError('transient', `the ComfyUI server ${url} could not be reached`, { cause: e });
      }
    }, { kind: SpanKind.CLIENT });
  }
  const expect200 = (r: { status: number; json: unknown }, what: string) => {
    if (r.status !== 200) throw new UpstreamError('transient', `the ComfyUI server ${url} answered ${r.status} to ${what}`);
    return r.json;
  };

  /** GET /api/jobs/{id}: the job; null when the server does not know it; undefined on a build without the route. */
  async function job(id: string, signal: AbortSignal): Promise<Record<string, unknown> | null | undefined> {
    if (fresh(jobsApi) && !jobsApi!.has) return undefined;
    const r = await ask('GET', `/api/jobs/${encodeURIComponent(id)}`, undefined, signal, ENTRY_BYTES);
    const routed = (r.status === 200 && isObject(r.json) && r.json.id === id) || (r.status === 404 && isObject(r.json) && r.json.error === 'Job not found');
    if (routed) jobsApi = { has: true, at: Date.now() };
    else if (r.status === 404 || r.status === 405) jobsApi = { has: false, at: Date.now() };
    else throw new UpstreamError('transient', `the ComfyUI server ${url} answered ${r.status} to GET /api/jobs/{id}`);
    return !jobsApi.has ? undefined : r.status === 200 ? (r.json as Record<string, unknown>) : null;
  }

  const server = {
    url,
    /** GET /prompt: pending and running prompts (a few bytes). */
    async queueLength(signal: AbortSignal): Promise<number> {
      const n = (expect200(await ask('GET', '/prompt', undefined, signal), 'GET /prompt') as { exec_info?: { queue_remaining?: unknown } } | undefined)?.exec_info?.queue_remaining;
      if (typeof n !== 'number') throw new UpstreamError('transient', `the ComfyUI server ${url} answered GET /prompt without exec_info.queue_remaining`);
      return n;
    },

    async history(id: string, signal: AbortSignal): Promise<HistoryEntry | undefined> {
      const j = expect200(await ask('GET', `/history/${encodeURIComponent(id)}`, undefined, signal, ENTRY_BYTES), 'GET /history/{id}');
      return isObject(j) && isObject(j[id]) ? (j[id] as HistoryEntry) : undefined;
    },

    /** Where the prompt is: one read of it on a current build, the history and the queue's length on an older one. */
    async locate(id: string, signal: AbortSignal): Promise<Whereabouts> {
      const j = await job(id, signal);
      if (j === undefined) {
        const entry = await server.history(id, signal);
        if (entry) return { state: 'ended', entry };
        const remaining = await server.queueLength(signal);
        // Nothing queued or running: ours is neither, unless it ended between the two reads.
        if (remaining > 0) return { state: 'somewhere', remaining };
        const late = await server.history(id, signal);
        return late ? { state: 'ended', entry: late } : { state: 'unknown' };
      }
      if (j === null) return { state: 'unknown' };
      if (j.status === 'pending') return { state: 'pending', ...(await place(id, Number(j.priority), signal)) };
      if (j.status === 'in_progress') return { state: 'running' };
      // normalize_history_item(include_outputs): the history's outputs and status.
      return { state: 'ended', entry: { outputs: isObject(j.outputs) ? (j.outputs as HistoryEntry['outputs']) : {}, status: isObject(j.execution_status) ? (j.execution_status as HistoryEntry['status']) : {} } };
    },

    /**
     * Whether a build without the jobs API holds the prompt in its queue: GET /queue, the one read
     * that says, read only when GET /prompt counts prompts there. Throws when it cannot be told.
     */
    async holds(id: string, signal: AbortSignal): Promise<boolean> {
      const q = expect200(await ask('GET', '/queue', undefined, signal, QUEUE_BYTES), 'GET /queue') as { queue_running?: unknown[]; queue_pending?: unknown[] } | undefined;
      return [...(q?.queue_running ?? []), ...(q?.queue_pending ?? [])].some((item) => Array.isArray(item) && item[1] === id);
    },

    /** The graph the server holds for the prompt (the job's workflow, or its history's prompt), if it can say. */
    async graphOf(id: string, signal: AbortSignal): Promise<Graph | undefined> {
      const j = await job(id, signal);
      const graph = j ? (j.workflow as { prompt?: unknown } | undefined)?.prompt : ((await server.history(id, signal)) as { prompt?: unknown[] } | undefined)?.prompt?.[2];
      return isObject(graph) ? (graph as Graph) : undefined;
    },

    /** True when this server's jobs API answered for a prompt (a build that refuses a repeated prompt_id, and cancels atomically). */
    hasJobsApi: () => Boolean(jobsApi?.has),

    /**
     * Ends the prompt wherever it stands: POST /api/jobs/{id}/cancel (dequeued, or interrupted only
     * while it is the one running). A build without it: POST /queue {delete}, then POST /interrupt
     * {prompt_id}, which stops nothing but ours from 0.3.57 on; an older build stops whatever runs,
     * so there it is sent only when GET /queue shows ours running (a read as large as the queue,
     * made only for a cancel on such a build; when it cannot be read, the prompt is left to finish).
     */
    async end(id: string, signal: AbortSignal): Promise<void> {
      const r = await ask('POST', `/api/jobs/${encodeURIComponent(id)}/cancel`, undefined, signal);
      if (r.status === 200 && isObject(r.json) && typeof r.json.cancelled === 'boolean') return;
      if (r.status !== 404 && r.status !== 405) throw new UpstreamError('transient', `the ComfyUI server ${url} answered ${r.status} to the cancel`);
      expect200(await ask('POST', '/queue', { delete: [id] }, signal), 'POST /queue');
      if (await targetedInterrupt(signal) || (await runs(id, signal))) expect200(await ask('POST', '/interrupt', { prompt_id: id }, signal), 'POST /interrupt');
    },

    /** POST /history {delete}: the prompt's graph and outputs' names no longer kept. */
    async forget(id: string, signal: AbortSignal): Promise<void> {
      expect200(await ask('POST', '/history', { delete: [id] }, signal), 'POST /history');
    },
  };

  /** GET /api/jobs, the oldest pending page: ours is placed behind those of a lower number (the queue is a heap by number). */
  async function place(id: string, priority: number, signal: AbortSignal): Promise<{ position?: number; behind?: number }> {
    const r = expect200(await ask('GET', `/api/jobs?status=pending&sort_by=created_at&sort_order=asc&limit=${PAGE}`, undefined, signal), 'GET /api/jobs') as { jobs?: Array<{ id?: unknown; priority?: unknown }>; pagination?: { has_more?: unknown } } | undefined;
    const jobs = r?.jobs ?? [];
    if (!jobs.some((j) => j.id === id)) return r?.pagination?.has_more ? { behind: jobs.length } : {};
    return { position: 1 + jobs.filter((j) => j.id !== id && Number(j.priority) < priority).length };
  }

  /** Whether GET /queue shows this prompt running (builds before 0.3.57); false when the queue cannot be read. */
  async function runs(id: string, signal: AbortSignal): Promise<boolean> {
    const q = await ask('GET', '/queue', undefined, signal, QUEUE_BYTES).catch((e: unknown) => {
      o.log?.warn({ err: e, comfyui: url, prompt_id: id }, 'the queue of this ComfyUI build (before 0.3.57) could not be read: a running prompt is left to finish');
      return undefined;
    });
    const running = (q?.status === 200 ? (q.json as { queue_running?: unknown[] } | undefined)?.queue_running : undefined) ?? [];
    return running.some((item) => Array.isArray(item) && item[1] === id);
  }

  async function targetedInterrupt(signal: AbortSignal): Promise<boolean> {
    if (!fresh(targeted)) {
      const r = await ask('GET', '/system_stats', undefined, signal);
      const version = (r.json as { system?: { comfyui_version?: unknown } } | undefined)?.system?.comfyui_version;
      targeted = { has: r.status === 200 && typeof version === 'string' && atLeast(version, TARGETED_INTERRUPT), at: Date.now() };
    }
    return targeted!.has;
  }

  return server;
}

export type ComfyServer = ReturnType<typeof comfyServer>;
