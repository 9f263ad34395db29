import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { UNLIMITED_RATE } from '../test/support/app.ts';
import { startFalFake } from '../test/support/fal-fake.ts';
import { startS3Server } from '../test/support/s3-server.ts';
import { freePort } from '../src/db/ports.ts';
import { onDatabase, startPostgres } from './soak/cluster.ts';
import { startApiAndWorker } from './support/api-and-worker.ts';
import { generatedMp4 } from './support/generated-mp4.ts';
import { meterProcesses, readProcess } from './support/process-meter.ts';

/*
 * `npm run bench:media`: BENCH_MEDIA_RESULTS provider results of BENCH_MEDIA_RESULT_MB (4 x 1 GB),
 * copied by ONE `adforge worker` from a fal fake that makes the bytes as it sends them, and
 * BENCH_MEDIA_INPUTS uploads of BENCH_MEDIA_INPUT_MB (2 x 200 MB) through POST /api/v1/uploads,
 * all at once, on local storage and on S3 (s3rver). Records each process's peak RSS (VmHWM) and
 * the copy rate beside the disk's own rate for the same bytes, written the same way at the same
 * time (generated -> file, fsynced), measured just before in the same run. See bench/README.md.
 */

const num = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);
const MB = 1024 * 1024;
const RESULTS = num('BENCH_MEDIA_RESULTS', 4);
const RESULT_BYTES = Math.round(num('BENCH_MEDIA_RESULT_MB', 1024) * MB);
const INPUTS = num('BENCH_MEDIA_INPUTS', 2);
const INPUT_BYTES = Math.round(num('BENCH_MEDIA_INPUT_MB', 200) * MB);
const STORAGES = (process.env.BENCH_MEDIA_STORAGES ?? 'local,s3').split(',').filter(Boolean) as Array<'local' | 's3'>;
// A service that reads whole files would hold several GB: past this the process is stopped, and said so, before the machine suffers.
const GUARD_MB = num('BENCH_MEDIA_RSS_GUARD_MB', 6144);
const MAX_S = num('BENCH_MAX_SECONDS', 1200);
const FAL_KEY = 'media-bench-fal-key:31aa';
const TOTAL = RESULTS * RESULT_BYTES + INPUTS * INPUT_BYTES;

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;
const rate = (bytes: number, ms: number) => (bytes / MB / (ms / 1000)).toFixed(0);

/** The disk's own rate for these bytes: the same sizes at once, generated -> file, each fsynced, in `dir`. */
async function diskRate(dir: string): Promise<number> {
  const sizes = [...Array<number>(RESULTS).fill(RESULT_BYTES), ...Array<number>(INPUTS).fill(INPUT_BYTES)];
  await fs.mkdir(dir, { recursive: true });
  const t0 = performance.now();
  await Promise.all(
    sizes.map(async (size, i) => {
      const file = path.join(dir, `disk-${i}`);
      await pipeline(generatedMp4(size), createWriteStream(file));
      const h = await fs.open(file, 'r+');
      await h.sync();
      await h.close();
    }),
  );
  const ms = performance.now() - t0;
  await fs.rm(dir, { recursive: true, force: true });
  return ms;
}

interface RunResult {
  storage: string;
  diskMs: number;
  copyMs: number | undefined;
  resultsMs: number | undefined;
  inputsMs: number | undefined;
  peaks: Record<string, number>;
  atRest: Record<string, number>;
  guarded: string[];
  problems: string[];
}

async function runOne(storage: 'local' | 's3'): Promise<RunResult> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `adforge-bench-media-${storage}-`));
  await fs.chmod(dir, 0o755);
  const cleanups: Array<() => Promise<unknown>> = [() => fs.rm(dir, { recursive: true, force: true })];
  const problems: string[] = [];
  const guarded: string[] = [];
  try {
    const db = await startPostgres(dir, (line) => log(`postgres: ${line}`));
    cleanups.unshift(() => db.handle.stop());
    const opened: number[] = [];
    const fal = await startFalFake({
      key: FAL_KEY,
      finishAfterMs: () => 0,
      // Made as they are sent: a 1 GB result needs no 1 GB buffer.
      video: {
        size: RESULT_BYTES,
        open: () => {
          opened.push(Date.now());
          return generatedMp4(RESULT_BYTES);
        },
      },
    });
    cleanups.unshift(fal.close);
    const s3 = storage === 's3' ? await startS3Server('media-bench') : undefined;
    if (s3) cleanups.unshift(s3.close);

    const port = await freePort();
    const dataDir = path.join(dir, 'data');
    const svc = await startApiAndWorker(
      {
        DATABASE_URL: db.url,
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_TIERS: UNLIMITED_RATE,
        ALLOW_PRIVATE_NETWORK_URLS: 'true',
        FILES_SIGNING_SECRET: 'media-bench-files-signing-secret-0123456789ab',
        FAL_KEY,
        FAL_QUEUE_URL: fal.url,
        ENGINE_ROUTES: 'kling-2.6=fal,*=local',
        UPSTREAM_POLL_MS: '500',
        UPSTREAM_WEBHOOKS: 'false',
        UPSTREAM_MAX_RESULT_MB: String(Math.ceil(RESULT_BYTES / MB) + 1),
        MAX_INPUT_VIDEO_MB: String(Math.ceil(INPUT_BYTES / MB) + 1),
        WORKER_CONCURRENCY: String(Math.max(4, RESULTS)),
        METRICS_PORT: '0',
        ...(s3?.env ?? {}),
        // Profiling the service processes (e.g. `--import` of a profiler hook): the test harness drops NODE_OPTIONS otherwise.
        ...(process.env.BENCH_MEDIA_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_MEDIA_NODE_OPTIONS } : {}),
      },
      port,
      { name: 'Media', credits: 1_000_000 },
    );
    cleanups.unshift(svc.stop);
    const agent = new Agent({ connect: { ca: svc.ca }, headersTimeout: 600_000, bodyTimeout: 600_000 });
    cleanups.unshift(() => agent.close());
    const api = async (p: string, body: string | Readable, headers: Record<string, string>) => {
      const res = await request(`https://127.0.0.1:${port}/api/v1${p}`, { method: 'POST', headers: { authorization: `Bearer ${svc.key}`, ...headers }, body, dispatcher: agent });
      return { status: res.statusCode, body: (await res.body.text()) as string };
    };

    // The disk's rate first, in the same run and the same directory, before the service writes.
    const diskMs = await diskRate(path.join(dataDir, 'disk-rate'));
    log(`${storage}: the disk wrote ${mb(TOTAL)} in ${(diskMs / 1000).toFixed(1)} s (${rate(TOTAL, diskMs)} MB/s)`);

    const procs = { worker: svc.worker, api: svc.api };
    const meter = meterProcesses({ worker: procs.worker.child.pid!, api: procs.api.child.pid! }, 200, (name, s) => {
      if (s.rssMb > GUARD_MB && !guarded.includes(name)) {
        guarded.push(name);
        log(`${name} holds ${s.rssMb.toFixed(0)} MB (over ${GUARD_MB}): stopped`);
        procs[name as 'worker' | 'api'].child.kill('SIGKILL');
      }
    });
    // Resident before any byte moves: what the process holds at rest, so the peak's growth reads apart.
    const atRest: Record<string, number> = {};
    for (const [name, proc] of Object.entries(procs)) atRest[name] = (await readProcess(proc.child.pid!))?.rssMb ?? 0;
    const t0 = Date.now();
    const creates = await Promise.all(
      Array.from({ length: RESULTS }, (_, i) => api('/videos/ai-video', JSON.stringify({ model: 'kling-2.6', prompt: `media ${i}`, aspect_ratio: '16:9', duration: 5 }), { 'content-type': 'application/json' })),
    );
    const ids = creates.map((c) => (c.status === 202 ? (JSON.parse(c.body).generation_id as string) : (problems.push(`create: ${c.status} ${c.body.slice(0, 200)}`), '')));
    const uploadsStart = Date.now();
    const uploads = Promise.all(
      Array.from({ length: INPUTS }, async () => {
        const res = await api('/uploads', generatedMp4(INPUT_BYTES), { 'content-type': 'video/mp4', 'content-length': String(INPUT_BYTES) }).catch((e: Error) => ({ status: 0, body: e.message }));
        if (res.status !== 201) problems.push(`upload: ${res.status} ${res.body.slice(0, 200)}`);
        else if (JSON.parse(res.body).size !== INPUT_BYTES) problems.push(`upload: stored ${JSON.parse(res.body).size} bytes of ${INPUT_BYTES}`);
        return Date.now();
      }),
    );
    const deadline = t0 + MAX_S * 1000;
    let rows: Array<{ status: string; completed_at: Date | null; output_bytes: number; error: string | null }> = [];
    while (Date.now() < deadline && !guarded.includes('worker')) {
      rows = (await onDatabase(db.url, async (c) => (await c.query(`select status, completed_at, output_bytes, error from generations where id = any($1)`, [ids.filter(Boolean)])).rows)) ?? rows;
      if (rows.length === ids.filter(Boolean).length && rows.every((r) => r.status !== 'processing')) break;
      await sleep(500);
    }
    const uploadEnds = await uploads;
    await meter.stop();
    const peaks: Record<string, number> = {};
    for (const [name, proc] of Object.entries(procs)) {
      const last = (await readProcess(proc.child.pid!)) ?? meter.series[name]!.at(-1);
      peaks[name] = Math.max(last?.hwmMb ?? 0, ...meter.series[name]!.map((s) => s.rssMb));
    }
    peaks['bench (fake, s3rver)'] = (await readProcess(process.pid))!.hwmMb;
    for (const r of rows) {
      if (r.status !== 'completed') problems.push(`generation ${r.status}${r.error ? `: ${r.error}` : ''}`);
      else if (Number(r.output_bytes) !== RESULT_BYTES) problems.push(`result stored as ${r.output_bytes} bytes of ${RESULT_BYTES}`);
    }
    const done = rows.filter((r) => r.status === 'completed' && r.completed_at).map((r) => r.completed_at!.getTime());
    const resultsOk = !guarded.includes('worker') && done.length === RESULTS && !problems.some((p) => !p.startsWith('upload'));
    const uploadsOk = !guarded.includes('api') && !problems.some((p) => p.startsWith('upload'));
    const resultsMs = resultsOk && opened.length ? Math.max(...done) - Math.min(...opened) : undefined;
    const inputsMs = uploadsOk && uploadEnds.length ? Math.max(...uploadEnds) - uploadsStart : undefined;
    const copyMs = resultsOk && uploadsOk ? Math.max(...done, ...uploadEnds) - Math.min(uploadsStart, ...opened) : undefined;
    return { storage, diskMs, copyMs, resultsMs, inputsMs, peaks, atRest, guarded, problems };
  } finally {
    for (const c of cleanups) await c().catch((e: unknown) => log(`cleanup: ${(e as Error).message}`));
  }
}

async function main() {
  const free = Number(execFileSync('df', ['--output=avail', '-B1', os.tmpdir()], { encoding: 'utf8' }).trim().split('\n')[1]);
  // The disk-rate files, the stored copies and, where the service still writes temp copies, those too.
  const needed = TOTAL * 3 + 2 * 1024 * MB;
  log(`${RESULTS} results of ${mb(RESULT_BYTES)} and ${INPUTS} uploads of ${mb(INPUT_BYTES)} at once (${mb(TOTAL)}); ${mb(free)} free in ${os.tmpdir()}`);
  if (free < needed) throw new Error(`${mb(needed)} of free disk needed in ${os.tmpdir()}, ${mb(free)} free`);
  const results: RunResult[] = [];
  for (const storage of STORAGES) results.push(await runOne(storage));

  console.log('');
  console.log(`## Media: ${RESULTS} x ${mb(RESULT_BYTES)} results + ${INPUTS} x ${mb(INPUT_BYTES)} uploads at once (${new Date().toISOString().slice(0, 10)})`);
  console.log('');
  console.log('| storage | worker peak RSS (results) | API peak RSS (uploads) | copy rate, all | results | uploads | disk, same bytes | copy / disk | notes |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  // A process the guard stopped was at least at the guard: its last reading says how far it had got.
  const peak = (r: RunResult, name: string) =>
    `${r.guarded.includes(name) ? '≥ ' : ''}${r.peaks[name]?.toFixed(0)} MB${r.guarded.includes(name) ? ' (stopped)' : ''} (${r.atRest[name]?.toFixed(0)} at rest)`;
  for (const r of results) {
    const cell = (bytes: number, ms: number | undefined) => (ms === undefined ? '–' : `${rate(bytes, ms)} MB/s`);
    const ratio = r.copyMs === undefined ? '–' : (r.diskMs / r.copyMs).toFixed(2);
    const notes = [...r.guarded.map((g) => `${g} stopped above the ${GUARD_MB} MB guard`), ...new Set(r.problems)].join('; ') || 'all stored, sizes checked';
    console.log(
      `| ${r.storage} | ${peak(r, 'worker')} | ${peak(r, 'api')} | ${cell(TOTAL, r.copyMs)} | ${cell(RESULTS * RESULT_BYTES, r.resultsMs)} | ${cell(INPUTS * INPUT_BYTES, r.inputsMs)} | ${rate(TOTAL, r.diskMs)} MB/s | ${ratio} | ${notes} |`,
    );
  }
  console.log('');
  console.log(`The bench process (the fake, s3rver) peaked at ${results.map((r) => `${r.peaks['bench (fake, s3rver)']?.toFixed(0)} MB (${r.storage})`).join(', ')}.`);
  process.exitCode = results.every((r) => r.problems.length === 0 && r.guarded.length === 0) ? 0 : 1;
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
