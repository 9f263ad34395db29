// The HTTP load generator, run in its own worker thread so that it does not share an event loop
// with the server it measures (both still share the machine's CPUs with PostgreSQL).
import { performance } from 'node:perf_hooks';
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

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const pool = new Pool(job.origin, {
    connections: job.concurrency,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    ...(job.ca ? { connect: { ca: job.ca } } : {}),
  });
  const latencies = new Float64Array(job.requests);
  const errorSamples: string[] = [];
  let next = 0;
  let done = 0;
  let errors = 0;
  const cpu0 = process.threadCpuUsage();
  const start = performance.now();
  const deadline = start + job.seconds * 1000;
  const run = `${process.pid}-${Date.now().toString(36)}`;
  const headers = (key: string, i: number) => ({
    ...job.headers,
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    ...(job.idempotencyKeys ? { 'idempotency-key': `bench-${run}-${i}` } : {}),
  });

  async function client(): Promise<void> {
    for (;;) {
      if (next >= job.requests || performance.now() >= deadline) return;
      const i = next++;
      const key = job.keys[i % job.keys.length]!;
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: job.path, method: 'POST', headers: headers(key, i), body: job.body });
        const text = await res.body.text();
        if (res.statusCode !== job.expectStatus || (job.expectText !== undefined && !text.includes(job.expectText))) {
          errors++;
          if (errorSamples.length < 5) errorSamples.push(`${res.statusCode} ${text.slice(0, 200)}`);
        }
      } catch (e) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push(String(e));
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

/** Runs `job` in a worker thread of its own (its CPU reported apart from the server's). */
export function httpLoad(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./http-load.ts', import.meta.url), { workerData: { kind: 'http-load', job } });
    let settled = false;
    worker.once('message', (m: { ok: true; result: LoadResult } | { ok: false; error: string }) => {
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

if (parentPort && workerData && (workerData as { kind?: string }).kind === 'http-load') {
  const port = parentPort;
  runLoad((workerData as { job: LoadJob }).job).then(
    (r) => port.postMessage({ ok: true, result: r }, [r.latenciesMs.buffer as ArrayBuffer]),
    (e) => port.postMessage({ ok: false, error: String((e as Error)?.stack ?? e) }),
  );
}
