// `npm run bench:pickup`: (1) job pickup: from a create's commit to its task starting in the worker,
// with 32 creates in flight over HTTPS (the load generator in its own thread), the worker in this
// process with the production options; the generation task is replaced by one that only records
// when it started, so that pickup alone is timed. The start of the create's statement
// (generations.created_at) stands in for its commit: the figures are upper bounds by the
// statement's own run time. (2) 1,000 graphql-ws subscriptions to `generationsUpdated` open on this
// node (held by a child process, so that this process's memory is the server's): the delay from a
// generation's status change to each subscription's event, and the server's memory per subscription.
// Knobs: BENCH_PICKUP_REQUESTS (4000), BENCH_SUBSCRIPTIONS (1000), BENCH_EVENTS (40).
import { fork } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { startWorker } from '../src/worker.ts';
import { httpLoad } from './http-load.ts';
import { startBenchService } from './support/service.ts';

const REQUESTS = Number(process.env.BENCH_PICKUP_REQUESTS ?? 4000);
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 1000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 40);
const now = () => performance.timeOrigin + performance.now();
const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
};
const fmt = (xs: number[]) => `p50 ${pct(xs, 0.5).toFixed(2)} ms, p99 ${pct(xs, 0.99).toFixed(2)} ms, max ${pct(xs, 1).toFixed(2)} ms (${xs.length})`;
const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MB`;

const svc = await startBenchService('pickup');
const { app, http } = svc;
const origin = `https://127.0.0.1:${http.port}`;
console.log(`pickup and subscription bench, ${new Date().toISOString()}: ${os.cpus().length} x ${os.cpus()[0]?.model}, Node ${process.version}, worker concurrency ${app.config.workerConcurrency}`);
try {
  // ---- (1) job pickup
  const started = new Map<string, number>();
  const worker = await startWorker(app, {
    replace: {
      run_generation: async (payload) => {
        started.set((payload as { generation_id: string }).generation_id, now());
      },
    },
  });
  const body = JSON.stringify({ model: 'fast', prompt: 'bench', aspect_ratio: '1:1' });
  const job = (requests: number) => ({ origin, path: '/api/v1/images/text-to-image', ca: svc.cert, keys: [svc.team.key], body, concurrency: 32, requests, seconds: 120, expectStatus: 202 });
  await httpLoad(job(Math.min(500, REQUESTS / 4))); // warm-up
  const since = new Date();
  const load = await httpLoad(job(REQUESTS));
  const created = await sql<{ id: string; ms: number }>`select id, extract(epoch from created_at) * 1000 as ms from generations where created_at >= ${since}`.execute(app.db);
  for (let waited = 0; waited < 20_000 && created.rows.some((r) => !started.has(r.id)); waited += 50) await new Promise((r) => setTimeout(r, 50));
  await worker.stop();
  const pickups = created.rows.filter((r) => started.has(r.id)).map((r) => started.get(r.id)! - Number(r.ms));
  console.log(`\n(1) job pickup, ${REQUESTS} creates at concurrency 32 (${((load.done / load.elapsedMs) * 1000).toFixed(0)} creates/s, ${load.errors} errors):`);
  console.log(`  create statement start -> task start: ${fmt(pickups)}; ${created.rows.length - pickups.length} never started`);

  // ---- (2) subscriptions
  const settle = async () => {
    await new Promise((r) => setTimeout(r, 1500));
    // `npm run bench:pickup` runs with --expose-gc: the heap is measured after a full collection.
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage();
  };
  const before = await settle();
  const child = fork(new URL('./support/subscribers.ts', import.meta.url), [JSON.stringify({ url: `wss://127.0.0.1:${http.port}/graphql`, cert: svc.cert, key: svc.team.key, count: SUBSCRIPTIONS })], { stdio: 'inherit' });
  const messages: Array<(m: any) => void> = [];
  child.on('message', (m) => messages.shift()?.(m));
  const reply = () => new Promise<any>((r) => messages.push(r));
  const t0 = performance.now();
  const ready = await reply();
  console.log(`\n(2) ${ready.ready} graphql-ws subscriptions open on this node (one socket each, one team) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const after = await settle();
  console.log(
    `  server memory: rss ${mb(before.rss)} -> ${mb(after.rss)}, heap used ${mb(before.heapUsed)} -> ${mb(after.heapUsed)}: ` +
      `${((after.rss - before.rss) / SUBSCRIPTIONS / 1024).toFixed(1)} KiB rss, ${((after.heapUsed - before.heapUsed) / SUBSCRIPTIONS / 1024).toFixed(1)} KiB heap per subscription`,
  );
  const principal = { teamId: svc.team.id, keyId: svc.team.keyId };
  const delays: number[] = [];
  const lastDelays: number[] = [];
  let missing = 0;
  for (let i = 0; i < EVENTS + 3; i++) {
    const out = await app.services.generationCreator.create(principal, 'text-to-image', { model: 'fast', prompt: `bench ${i}`, aspect_ratio: '1:1' });
    const id = (out.body as { generation_id: string }).generation_id;
    const arrivals = reply();
    child.send({ collect: id, expect: SUBSCRIPTIONS });
    const changedAt = now();
    await app.services.lifecycle.complete(id, [`generations/${svc.team.id}/${id}/1.png`], {});
    const { times } = (await arrivals) as { times: number[] };
    if (i < 3) continue; // warm-up
    missing += SUBSCRIPTIONS - times.length;
    for (const t of times) delays.push(t - changedAt);
    lastDelays.push(Math.max(...times) - changedAt);
  }
  console.log(`  status change -> event, every subscription of ${EVENTS} events: ${fmt(delays)}; ${missing} events missing`);
  console.log(`  status change -> the last of the ${SUBSCRIPTIONS} subscriptions: ${fmt(lastDelays)}`);
  child.send({ stop: true });
  await new Promise((r) => child.once('exit', r));
} finally {
  await svc.stop();
}
