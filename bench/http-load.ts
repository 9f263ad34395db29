// The HTTP load generator, run in its own worker thread so that it does not share an event loop
// with the server it measures (both still share the machine's CPUs with PostgreSQL).
// Two modes: closed loop (`concurrency` clients, each sending its next request after the previous
// answer: the throughput at saturation) and open loop (`rate` set: requests leave on a fixed
// schedule whatever the earlier ones do, and latency counts from the scheduled time, so a stall of
// the server shows in the figures instead of slowing the clients down).
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { Pool } from 'undici';

export interface LoadJob {
  origin: string;
  path: string;
  /** PEM of the server's self-signed certificate (trusted, not ignored); absent for plain HTTP. */
  ca?: string | undefined;
  /** Extra headers for every request (e.g. X-Forwarded-Proto on the plain-HTTP variant). */
  headers?: Record<string, string>;
  /** Request i uses keys[i % keys.length]: one key is "one team", 64 keys are 64 teams, round-robin. */
  keys: string[];
  body: string;
  concurrency: number;
  /**
   * Open loop: requests per second, request i scheduled at t0 + i / rate. `concurrency` is then the
   * number of connections (undici queues beyond it, inside the measured time) and `requests` the
   * number scheduled, `seconds` still a hard stop.
   */
  rate?: number;
  /** Open loop: the first requests are sent on the same schedule but not recorded (warm connections and caches). */
  warmupRequests?: number;
  /** Open loop: more requests than this unanswered at once counts the rest as dropped (never sent), as k6 does. */
  maxOutstanding?: number;
  requests: number;
  seconds: number;
  expectStatus: number;
  /** Each request sends its own fresh Idempotency-Key (the idempotent-create runs). */
  idempotencyKeys?: boolean;
  /** A response must also contain this text to count as a success (GraphQL answers 200 with errors). */
  expectText?: string;
}

export interface LoadResult {
  done: number;
  errors: number;
  errorSamples: string[];
  elapsedMs: number;
  latenciesMs: Float64Array;
  /** CPU time of this load-generator thread (user + system), ms. */
  cpuMs: number;
}

/** Percentiles of a histogram, ms. */
export interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

export interface OpenLoopResult {
  /** Requests answered (recorded ones only, warm-up excluded). */
  done: number;
  errors: number;
  /** Scheduled but never sent: `maxOutstanding` unanswered already. */
  dropped: number;
  errorSamples: string[];
  /** The rate actually sent over the recorded part, per second. */
  sentRate: number;
  elapsedMs: number;
  /** Scheduled time -> full answer. */
  latency: Percentiles;
  /** Scheduled time -> handed to undici: how far behind its schedule the generator itself was. */
  lateness: Percentiles;
  /** Most requests unanswered at once. */
  maxOutstanding: number;
  cpuMs: number;
}

/** A histogram of microseconds (createHistogram records integers >= 1) read back in ms. */
export function percentiles(h: RecordableHistogram): Percentiles {
  const ms = (v: number) => v / 1000;
  return h.count === 0
    ? { count: 0, p50: NaN, p99: NaN, p999: NaN, max: NaN }
    : { count: h.count, p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), p999: ms(h.percentile(99.9)), max: ms(h.max) };
}

export function recordMs(h: RecordableHistogram, ms: number): void {
  h.record(Math.max(1, Math.round(ms * 1000)));
}

/** The pool and one request of `job`: resolves to an error text, or undefined when the answer was the expected one. */
function requester(job: LoadJob) {
  const pool = new Pool(job.origin, {
    connections: job.concurrency,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    ...(job.ca ? { connect: { ca: job.ca } } : {}),
  });
  const run = `${process.pid}-${Date.now().toString(36)}`;
  const send = async (i: number): Promise<string | undefined> => {
    const headers = {
      ...job.headers,
      authorization: `Bearer ${job.keys[i % job.keys.length]!}`,
      'content-type': 'application/json',
      ...(job.idempotencyKeys ? { 'idempotency-key': `bench-${run}-${i}` } : {}),
    };
    try {
      const res = await pool.request({ path: job.path, method: 'POST', headers, body: job.body });
      const text = await res.body.text();
      if (res.statusCode !== job.expectStatus || (job.expectText !== undefined && !text.includes(job.expectText))) return `${res.statusCode} ${text.slice(0, 200)}`;
      return undefined;
    } catch (e) {
      return String(e);
    }
  };
  return { pool, send };
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const { pool, send } = requester(job);
  const latencies = new Float64Array(job.requests);
  const errorSamples: string[] = [];
  let next = 0;
  let done = 0;
  let errors = 0;
  const cpu0 = process.threadCpuUsage();
  const start = performance.now();
  const deadline = start + job.seconds * 1000;

  async function client(): Promise<void> {
    for (;;) {
      if (next >= job.requests || performance.now() >= deadline) return;
      const i = next++;
      const t0 = performance.now();
      const failed = await send(i);
      if (failed !== undefined) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push(failed);
      }
      latencies[done++] = performance.now() - t0;
    }
  }

  try {
    await Promise.all(Array.from({ length: job.concurrency }, client));
  } finally {
    await pool.close().catch(() => {});
  }
  const elapsedMs = performance.now() - start;
  const cpu = process.threadCpuUsage(cpu0);
  return { done, errors, errorSamples, elapsedMs, latenciesMs: latencies.slice(0, done), cpuMs: (cpu.user + cpu.system) / 1000 };
}

/**
 * Open loop: request i is due at t0 + i / rate and leaves then, answered or not the earlier ones.
 * The thread sleeps until the next due time (timers fire up to a millisecond late: no busy wait
 * taking a core from the server) and then sends everything due, so a late wake-up shows as
 * lateness and in the latency, never as a slower schedule.
 */
export async function runOpenLoop(job: LoadJob & { rate: number }): Promise<OpenLoopResult> {
  const { pool, send } = requester(job);
  const warm = job.warmupRequests ?? 0;
  const cap = job.maxOutstanding ?? 4096;
  const latency = createHistogram();
  const lateness = createHistogram();
  const errorSamples: string[] = [];
  let errors = 0;
  let dropped = 0;
  let outstanding = 0;
  let peak = 0;
  let lastSent = 0;
  let recordedFrom = 0;
  const inflight = new Set<Promise<void>>();
  const interval = 1000 / job.rate;
  const cpu0 = process.threadCpuUsage();
  const t0 = performance.now() + 5;
  const deadline = t0 + job.seconds * 1000;
  const total = warm + job.requests;
  try {
    for (let i = 0; i < total; ) {
      const now = performance.now();
      if (now >= deadline) break;
      const due = t0 + i * interval;
      if (now < due) {
        await new Promise((r) => setTimeout(r, due - now));
        continue;
      }
      for (; i < total && t0 + i * interval <= performance.now(); i++) {
        const scheduled = t0 + i * interval;
        const recorded = i >= warm;
        if (i === warm) recordedFrom = scheduled;
        if (outstanding >= cap) {
          if (recorded) dropped++;
          continue;
        }
        const sentAt = performance.now();
        if (recorded) recordMs(lateness, sentAt - scheduled);
        lastSent = sentAt;
        outstanding++;
        peak = Math.max(peak, outstanding);
        const p = send(i).then((failed) => {
          outstanding--;
          if (!recorded) return;
          recordMs(latency, performance.now() - scheduled);
          if (failed !== undefined) {
            errors++;
            if (errorSamples.length < 5) errorSamples.push(failed);
          }
        });
        inflight.add(p);
        void p.finally(() => inflight.delete(p));
      }
    }
    await Promise.all(inflight);
  } finally {
    await pool.close().catch(() => {});
  }
  const cpu = process.threadCpuUsage(cpu0);
  const sentSpan = Math.max(1, lastSent - recordedFrom);
  return {
    done: latency.count,
    errors,
    dropped,
    errorSamples,
    sentRate: ((latency.count + dropped) / sentSpan) * 1000,
    elapsedMs: performance.now() - t0,
    latency: percentiles(latency),
    lateness: percentiles(lateness),
    maxOutstanding: peak,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

/** Runs `job` open loop in a worker thread of its own (see runOpenLoop). */
export function openLoopLoad(job: LoadJob & { rate: number }): Promise<OpenLoopResult> {
  return inWorker<OpenLoopResult>('open-loop', job);
}

/** Runs `job` in a worker thread of its own (its CPU reported apart from the server's). */
export function httpLoad(job: LoadJob): Promise<LoadResult> {
  return inWorker<LoadResult>('http-load', job);
}

function inWorker<T>(kind: 'http-load' | 'open-loop', job: LoadJob): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./http-load.ts', import.meta.url), { workerData: { kind, job } });
    let settled = false;
    worker.once('message', (m: { ok: true; result: T } | { ok: false; error: string }) => {
      settled = true;
      void worker.terminate();
      if (m.ok) resolve(m.result);
      else reject(new Error(`load generator failed: ${m.error}`));
    });
    worker.once('error', (e) => {
      settled = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`load generator exited with code ${code}`));
    });
  });
}

const data = parentPort && workerData ? (workerData as { kind?: string; job: LoadJob }) : undefined;
if (parentPort && data?.kind === 'http-load') {
  const port = parentPort;
  runLoad(data.job).then(
    (r) => port.postMessage({ ok: true, result: r }, [r.latenciesMs.buffer as ArrayBuffer]),
    (e) => port.postMessage({ ok: false, error: String((e as Error)?.stack ?? e) }),
  );
} else if (parentPort && data?.kind === 'open-loop' && data.job.rate !== undefined) {
  const port = parentPort;
  runOpenLoop({ ...data.job, rate: data.job.rate }).then(
    (r) => port.postMessage({ ok: true, result: r }),
    (e) => port.postMessage({ ok: false, error: String((e as Error)?.stack ?? e) }),
  );
}
