import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onDatabase } from './soak/cluster.ts';
import { machineBetween, meterProcesses, usageBetween } from './support/process-meter.ts';
import { countBetween, maxInWindow, percentile, sortedCopy } from './support/stats.ts';
import { PROVIDERS, parseBudget, serviceDefaults, startWorld, type BudgetWindows, type Provider, type World } from './inflight/world.ts';

/*
 * `npm run bench:inflight`: BENCH_INFLIGHT_COUNT generations (10,000) submitted through REST to
 * the fal, HeyGen and Submagic fakes, waited on by ONE `adforge worker` process. Every job ends by
 * its fake's clock, at a uniform moment of SPREAD seconds starting WAIT seconds after the first
 * create, so all of them are in flight together once submitted: the worker's CPU and memory are
 * read over that window. Then they end, and each generation's completion in the database is timed from the
 * moment its fake ended it. See bench/README.md.
 */

const num = (name: string, dflt: number) => {
  const v = process.env[name];
  return v === undefined || v === '' ? dflt : Number(v);
};
const COUNT = num('BENCH_INFLIGHT_COUNT', 10_000);
// 10,000 submits at a few dozen a second on a shared machine take minutes: the wait leaves them room.
const WAIT_S = num('BENCH_INFLIGHT_WAIT_SECONDS', 480);
const SPREAD_S = num('BENCH_INFLIGHT_SPREAD_SECONDS', 300);
const CONCURRENCY = num('BENCH_INFLIGHT_CONCURRENCY', 16);
// At Submagic's documented 100 reads an hour a third of 10,000 projects (three reads each) would take 100 hours.
const SUBMAGIC_READS_PER_HOUR = num('BENCH_INFLIGHT_SUBMAGIC_READS_PER_HOUR', 200_000);
const MAX_S = num('BENCH_MAX_SECONDS', WAIT_S + SPREAD_S + 1500);
const SHARES: Record<Provider, number> = { fal: 1, heygen: 1, submagic: 1 };
for (const part of (process.env.BENCH_INFLIGHT_SHARES ?? '').split(',').filter(Boolean)) {
  const [k, v] = part.split('=');
  if (k && k in SHARES) SHARES[k as Provider] = Number(v);
}
/** The polls are judged by the budgets the service is given (`<P>_POLL_BUDGET`), every window of each. */
const SETTINGS = serviceDefaults(SUBMAGIC_READS_PER_HOUR);
const BUDGETS: Record<Provider, BudgetWindows> = {
  fal: parseBudget(SETTINGS.FAL_POLL_BUDGET!),
  heygen: parseBudget(SETTINGS.HEYGEN_POLL_BUDGET!),
  submagic: parseBudget(SETTINGS.SUBMAGIC_POLL_BUDGET!),
};

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const started = Date.now();
let deadline = started + MAX_S * 1000;
/** How many jobs were in flight at the waiting window's end, and whether that was all of them from its start. */
let inFlight: [number, boolean] = [0, false];

/** Which provider the i-th create goes to, interleaved by their shares. */
function planOf(count: number): Provider[] {
  const total = PROVIDERS.reduce((n, p) => n + SHARES[p], 0);
  const plan: Provider[] = [];
  const given: Record<Provider, number> = { fal: 0, heygen: 0, submagic: 0 };
  for (let i = 0; i < count; i++) {
    // The provider furthest behind its share takes the next create.
    const p = PROVIDERS.filter((x) => SHARES[x] > 0).sort((a, b) => given[a] / SHARES[a] - given[b] / SHARES[b])[0]!;
    given[p] += total;
    plan.push(p);
  }
  return plan;
}

async function createAll(world: World, plan: Provider[]): Promise<Map<string, Provider>> {
  const ids = new Map<string, Provider>();
  let next = 0;
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < plan.length && Date.now() < deadline) {
        const i = next++;
        try {
          ids.set(await world.create(plan[i]!, i), plan[i]!);
        } catch (e) {
          failures.push((e as Error).message);
        }
      }
    }),
  );
  if (failures.length) throw new Error(`${failures.length} creates failed, the first: ${failures[0]}`);
  return ids;
}

const submitted = (w: World) => w.fal.submits.length + w.heygen.translationCreates.length + w.submagic.projects.size;

async function terminalCount(w: World): Promise<number> {
  const n = await onDatabase(w.db.url, async (c) => (await c.query(`select count(*)::int as n from generations where status <> 'processing'`)).rows[0].n as number, 10_000);
  return n ?? 0;
}

interface Outcome {
  provider: Provider;
  status: string;
  completedAt: number | undefined;
  finishAt: number | undefined;
  submits: number;
}

/** Each generation's end in the database beside its fake's: when the fake ended the job, and how often it was submitted. */
async function outcomes(w: World, ids: Map<string, Provider>): Promise<Map<string, Outcome>> {
  const rows =
    (await onDatabase(
      w.db.url,
      async (c) =>
        (
          await c.query(
            `select g.id, g.status, g.completed_at, u.provider_job_id from generations g
               left join lateral (select provider_job_id from upstream_jobs where generation_id = g.id and provider_job_id is not null order by created_at desc limit 1) u on true`,
          )
        ).rows as Array<{ id: string; status: string; completed_at: Date | null; provider_job_id: string | null }>,
      60_000,
    )) ?? [];
  // Submits counted by the fakes, by what names the generation: fal's prompt, HeyGen's and Submagic's title.
  const submits = new Map<string, number>();
  const bump = (k: string) => submits.set(k, (submits.get(k) ?? 0) + 1);
  for (const s of w.fal.submits) bump(String(s.input.prompt));
  for (const s of w.heygen.translationCreates) bump(String(s.body.title));
  for (const p of w.submagic.projects.values()) bump(p.title);
  const promptOf = new Map<string, string>();
  for (const s of w.fal.submits) promptOf.set(s.requestId, String(s.input.prompt));
  const out = new Map<string, Outcome>();
  for (const r of rows) {
    const provider = ids.get(r.id);
    if (!provider) continue;
    const job = r.provider_job_id ?? '';
    const finishAt = provider === 'fal' ? w.fal.requests.get(job)?.finishAt : provider === 'heygen' ? w.heygen.jobs.get(job)?.finishAt : w.submagic.projects.get(job)?.transcribedAt;
    const name = provider === 'fal' ? (promptOf.get(job) ?? '') : `adforge ${r.id}`;
    out.set(r.id, { provider, status: r.status, completedAt: r.completed_at?.getTime(), finishAt, submits: submits.get(name) ?? 0 });
  }
  return out;
}

const ms = (v: number) => (Number.isFinite(v) ? (v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`) : '–');

async function main() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-bench-inflight-'));
  await fs.chmod(dir, 0o755);
  const plan = planOf(COUNT);
  log(`${COUNT} generations (${PROVIDERS.map((p) => `${p} ${plan.filter((x) => x === p).length}`).join(', ')}); they end from ${WAIT_S} s after the first create, uniformly over ${SPREAD_S} s`);
  // Every job ends between WAIT and WAIT + SPREAD seconds after the first create (uniformly), or
  // at once if it was submitted later than its end: until then all of them are in flight together.
  let t0 = Date.now();
  let firstFinish = Infinity;
  const finishAfterMs = () => {
    const at = t0 + WAIT_S * 1000 + Math.random() * SPREAD_S * 1000;
    firstFinish = Math.min(firstFinish, at);
    return Math.max(0, at - Date.now());
  };
  let world: World | undefined;
  let meter: ReturnType<typeof meterProcesses> | undefined;
  try {
    world = await startWorld({ dir, finishAfterMs, submagicReadsPerHour: SUBMAGIC_READS_PER_HOUR, log });
    const w = world;
    log(`service up; worker pid ${w.pids.worker}; ${Object.entries(SETTINGS).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    meter = meterProcesses(w.pids, 1000);

    t0 = Date.now();
    const ids = await createAll(w, plan);
    const tCreated = Date.now();
    log(`${ids.size} creates answered 202 in ${((tCreated - t0) / 1000).toFixed(1)} s`);
    // No job ends before `release`; a worker that has not submitted everything a minute before it
    // never will in time (polls come first in its queue): the window is then that last minute.
    const release = t0 + WAIT_S * 1000;
    while (submitted(w) < COUNT && Date.now() < deadline && Date.now() < release - 65_000) await sleep(500);
    const tSubmitted = Date.now();
    const allSubmitted = submitted(w) >= COUNT;
    log(`${submitted(w)} submitted to the fakes after ${((tSubmitted - t0) / 1000).toFixed(1)} s; the first job ends in ${((Math.min(firstFinish, release) - tSubmitted) / 1000).toFixed(0)} s`);

    // The waiting window: everything submitted (or all the worker got to), nothing ended yet.
    const wFrom = allSubmitted ? tSubmitted + 5000 : tSubmitted;
    const wTo = Math.min(firstFinish, release) - 1000;
    if (wTo - wFrom < 10_000) log(`⚠ the submits took longer than BENCH_INFLIGHT_WAIT_SECONDS allows for a waiting window: raise it`);
    while (Date.now() < wTo && Date.now() < deadline) await sleep(1000);
    inFlight = [submitted(w), allSubmitted];
    log('jobs are ending');
    let last = -1;
    for (;;) {
      const done = await terminalCount(w);
      if (done >= ids.size || Date.now() >= deadline) break;
      if (done !== last) log(`${done} / ${ids.size} generations ended`);
      last = done;
      await sleep(5000);
    }
    const tEnd = Date.now();
    await meter.stop();
    const results = await outcomes(w, ids);
    report({ w, meter, ids, results, t0, tCreated, tSubmitted, wFrom, wTo, tEnd });
  } finally {
    await meter?.stop();
    await world?.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function report(r: {
  w: World;
  meter: ReturnType<typeof meterProcesses>;
  ids: Map<string, Provider>;
  results: Map<string, Outcome>;
  t0: number;
  tCreated: number;
  tSubmitted: number;
  wFrom: number;
  wTo: number;
  tEnd: number;
}) {
  const { w, meter } = r;
  const pollMs = Number(w.env.UPSTREAM_POLL_MS ?? 5000);
  const pollMaxMs = Number(w.env.UPSTREAM_POLL_MAX_MS ?? 60_000);
  console.log('');
  console.log(`## In flight: ${r.ids.size} generations, one worker (${new Date().toISOString().slice(0, 10)})`);
  console.log('');
  const windowOk = r.wTo - r.wFrom >= 10_000;
  const held = inFlight[1] ? `all ${r.ids.size} submitted` : `⚠ only ${inFlight[0]} of ${r.ids.size} submitted by its end: the worker did not get to the rest`;
  console.log(`Waiting window (${held}, none ended): ${((r.wTo - r.wFrom) / 1000).toFixed(0)} s${windowOk ? '' : ' ⚠ too short to read: raise BENCH_INFLIGHT_WAIT_SECONDS'}`);
  console.log('');
  console.log('| process | CPU (cores) | children (cores) | RSS mean / max | VmHWM at window end |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, series] of Object.entries(meter.series)) {
    const u = usageBetween(series, r.wFrom, r.wTo);
    if (!u) continue;
    console.log(`| ${name} | ${u.cores.toFixed(3)} | ${u.childCores.toFixed(3)} | ${u.rssMeanMb.toFixed(0)} / ${u.rssMaxMb.toFixed(0)} MB | ${u.hwmMb.toFixed(0)} MB |`);
  }
  const m = machineBetween(meter.machine, r.wFrom, r.wTo);
  if (m) console.log(`| whole machine (${os.cpus().length} cores) | ${m.busyCores.toFixed(2)} | | steal ${m.stealCores.toFixed(2)} | |`);
  console.log('');
  console.log('Polls as the fakes counted them (every status read; Submagic: project reads, refused ones too):');
  console.log('');
  console.log('| provider | polls | 429s | max in any 1 s | mean /s while waiting | budget (`<P>_POLL_BUDGET`) | busiest window / allowed | within |');
  console.log('|---|---:|---:|---:|---:|---|---|---|');
  const span = (r.tEnd - r.t0) / 1000;
  const logs: Record<Provider, Array<{ at: number; status: number }>> = { fal: r.w.fal.readLog, heygen: r.w.heygen.readLog, submagic: r.w.submagic.readLog };
  for (const p of PROVIDERS) {
    const t = sortedCopy(logs[p].map((l) => l.at));
    const refused = logs[p].filter((l) => l.status === 429).length;
    const max1 = maxInWindow(t, 1000);
    const waitRate = r.wTo > r.wFrom ? countBetween(t, r.wFrom, r.wTo) / ((r.wTo - r.wFrom) / 1000) : NaN;
    // A window longer than the run is judged by the waiting window's rate carried over it.
    const judged = BUDGETS[p].map((b) => {
      const busiest = b.seconds <= span ? maxInWindow(t, b.seconds * 1000) : Math.round(waitRate * b.seconds);
      return { text: `${busiest} / ${b.requests} per ${b.seconds} s${b.seconds <= span ? '' : ' (projected)'}`, ok: busiest <= b.requests };
    });
    const ok = judged.every((j) => j.ok) && refused === 0;
    console.log(
      `| ${p} | ${t.length} | ${refused} | ${max1} | ${waitRate.toFixed(1)} | ${BUDGETS[p].map((b) => `${b.requests}/${b.seconds}`).join(',')} | ${judged.map((j) => j.text).join('; ')} | ${ok ? 'yes' : '**no**'} |`,
    );
  }
  console.log('');
  console.log('From the provider ending a job (its fake\'s clock) to the generation completed in the database:');
  console.log('');
  console.log('| provider | path | completed | failed | unfinished | p50 | p99 | max | one submit each |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---|');
  // A provider is on the webhook path when its fake delivered webhooks (a fake that sends none has no hooksSent).
  const hooked = (p: Provider) => {
    const f = w[p] as { hooksSent?: unknown[]; callbacksSent?: unknown[] };
    return (f.hooksSent?.length ?? 0) + (f.callbacksSent?.length ?? 0) > 0;
  };
  let allOne = true;
  for (const p of PROVIDERS) {
    const mine = [...r.results.values()].filter((o) => o.provider === p);
    if (!mine.length) continue;
    const completed = mine.filter((o) => o.status === 'completed');
    const lat = sortedCopy(completed.filter((o) => o.completedAt !== undefined && o.finishAt !== undefined).map((o) => o.completedAt! - o.finishAt!));
    const notOne = mine.filter((o) => o.submits !== 1).length;
    allOne &&= notOne === 0 && mine.length === [...r.ids.values()].filter((x) => x === p).length;
    const pathName = hooked(p) ? 'webhook' : `poll (UPSTREAM_POLL_MS ${pollMs}, UPSTREAM_POLL_MAX_MS ${pollMaxMs})`;
    console.log(
      `| ${p} | ${pathName} | ${completed.length} | ${mine.filter((o) => o.status === 'failed').length} | ${mine.filter((o) => o.status === 'processing').length} | ${ms(percentile(lat, 0.5))} | ${ms(percentile(lat, 0.99))} | ${ms(lat.at(-1) ?? NaN)} | ${notOne === 0 ? 'yes' : `**no**: ${notOne} not submitted exactly once`} |`,
    );
  }
  console.log('');
  console.log(
    `Creates ${((r.tCreated - r.t0) / 1000).toFixed(1)} s, all submitted at ${((r.tSubmitted - r.t0) / 1000).toFixed(1)} s, all ended at ${((r.tEnd - r.t0) / 1000).toFixed(1)} s. Every generation completed with one submit: ${allOne && [...r.results.values()].every((o) => o.status === 'completed') ? 'yes' : '**no**'}.`,
  );
  const failed = [...r.results.values()].filter((o) => o.status === 'failed').length;
  if (failed) for (const line of w.workerTail()) console.log(`worker said: ${line.slice(0, 300)}`);
  process.exitCode ??= allOne && failed === 0 ? 0 : 1;
}

let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.once(sig, () => {
    if (stopping) return;
    stopping = true;
    log(`${sig}: stopping`);
    deadline = 0;
    process.exitCode = 2;
  });

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
