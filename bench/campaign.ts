// `npm run bench:campaign`: a 10,000-row CSV through `adforge campaign run` (a child process, the
// real client) against the API over HTTPS: how many rows per second are checked (every row by
// the server's rules), stored, and submitted as generations by the worker's campaign task; and
// the client's peak memory for 1,000 and 10,000 rows, to show it does not grow with the file.
// Only the campaign task runs (no renderer), so submission is measured alone. Knobs: BENCH_ROWS (10000).
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { run } from 'graphile-worker';
import { stringify } from 'csv-stringify/sync';
import { sql } from 'kysely';
import { taskList } from '../tasks/index.ts';
import { runCampaignTask } from '../tasks/run-campaign.ts';
import { startBenchService } from './support/service.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const CLI = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const NODE = process.execPath;

const svc = await startBenchService('campaign');
try {
  const { app, http, dir } = svc;
  const caFile = path.join(dir, 'ca.pem');
  await fs.writeFile(caFile, svc.cert);
  const key = { key: svc.team.key };

  const csvFile = async (rows: number) => {
    const file = path.join(dir, `campaign-${rows}.csv`);
    const records = Array.from({ length: rows }, (_, i) => [
      'text-to-image',
      `ad-${i}`,
      `Poster ${i}: a trail shoe on wet rock, morning light, "bold" headline, ${i % 7} accents`,
      'fast',
      ['1:1', '9:16', '16:9', '4:5'][i % 4],
      String(1 + (i % 2)),
    ]);
    await fs.writeFile(file, stringify([['type', 'row_key', 'prompt', 'model', 'aspect_ratio', 'quantity'], ...records]));
    return file;
  };

  /** Runs the CLI; returns when `until` (a line of its output) appears or it exits, with its peak RSS. */
  const cli = (args: string[], until?: RegExp) =>
    new Promise<{ lines: { at: number; text: string }[]; peakRssMb: number; code: number | null; kill: () => void }>((resolve, reject) => {
      const child = spawn(NODE, [CLI, 'campaign', 'run', ...args, '--api-url', `https://127.0.0.1:${http.port}`, '--api-key', key.key, '--ca', caFile], {
        env: { ...process.env, FORCE_COLOR: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const lines: { at: number; text: string }[] = [];
      let peak = 0;
      const sample = setInterval(async () => {
        const status = await fs.readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
        const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
        peak = Math.max(peak, hwm);
      }, 50);
      let buffer = '';
      let done = false;
      const finish = (code: number | null) => {
        if (done) return;
        done = true;
        clearInterval(sample);
        resolve({ lines, peakRssMb: peak, code, kill: () => child.kill('SIGINT') });
      };
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const text = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          lines.push({ at: performance.now(), text });
          if (until?.test(text)) finish(null);
        }
      });
      child.stderr.on('data', (c: Buffer) => process.stderr.write(c));
      child.on('error', reject);
      child.on('exit', (code) => finish(code));
    });

  const t = (lines: { at: number; text: string }[], re: RegExp) => lines.find((l) => re.test(l.text))?.at;

  console.log(`campaign bench: ${os.availableParallelism()} cores, Node ${process.version}`);
  // Dry runs: every row checked by the server, priced; the client's memory at two file sizes.
  const small = await csvFile(Math.min(1000, ROWS));
  const big = await csvFile(ROWS);
  for (const file of [small, big]) {
    const rows = file === small ? Math.min(1000, ROWS) : ROWS;
    const t0 = performance.now();
    const r = await cli([file, '--dry-run']);
    const ms = performance.now() - t0;
    if (r.code !== 0) throw new Error(`dry run exited ${r.code}: ${r.lines.map((l) => l.text).join('\n')}`);
    console.log(`dry run ${rows} rows: ${(ms / 1000).toFixed(1)} s, ${((rows / ms) * 1000).toFixed(0)} rows/s checked; client peak RSS ${r.peakRssMb.toFixed(0)} MB`);
  }

  // The real run, with only the campaign task working (no renderer): check, store, start, submit.
  const worker = await run({ pgPool: app.database.pool, concurrency: 1, noHandleSignals: true, pollInterval: 200, taskList: taskList(app.jobs, [runCampaignTask], []) });
  const t0 = performance.now();
  const started = await cli([big, '--yes', '--name', 'bench'], /^started:/);
  const submittedAt = await (async () => {
    for (;;) {
      const r = await sql<{ n: number }>`select count(*)::int as n from campaign_rows where state <> 'pending'`.execute(app.db);
      if (r.rows[0]!.n >= ROWS) return performance.now();
      await new Promise((res) => setTimeout(res, 100));
    }
  })();
  const checkedAt = t(started.lines, /checked, all valid/)!;
  const sentAt = t(started.lines, /^rows sent:/)!;
  const startAt = t(started.lines, /^started:/)!;
  await new Promise((r) => setTimeout(r, 2500)); // a progress line or two after submission
  const progress = started.lines.filter((l) => l.text.startsWith('progress:') && l.at > startAt);
  const gaps = progress.slice(1).map((l, i) => l.at - progress[i]!.at);
  started.kill();
  const g = await sql<{ n: number; credits: number }>`select count(*)::int as n, sum(credits)::int as credits from generations`.execute(app.db);
  console.log(`real run ${ROWS} rows:`);
  console.log(`  check    ${((checkedAt - t0) / 1000).toFixed(1)} s  ${((ROWS / (checkedAt - t0)) * 1000).toFixed(0)} rows/s`);
  console.log(`  store    ${((sentAt - checkedAt) / 1000).toFixed(1)} s  ${((ROWS / (sentAt - checkedAt)) * 1000).toFixed(0)} rows/s`);
  console.log(`  submit   ${((submittedAt - startAt) / 1000).toFixed(1)} s  ${((ROWS / (submittedAt - startAt)) * 1000).toFixed(0)} rows/s (generations created by the campaign task)`);
  console.log(`  overall  ${((submittedAt - t0) / 1000).toFixed(1)} s  ${((ROWS / (submittedAt - t0)) * 1000).toFixed(0)} rows/s, file to every row submitted`);
  console.log(`  client peak RSS ${started.peakRssMb.toFixed(0)} MB; progress lines while submitting: ${progress.length}, largest gap ${gaps.length ? (Math.max(...gaps) / 1000).toFixed(1) : '-'} s`);
  console.log(`  generations ${g.rows[0]!.n}, credits ${g.rows[0]!.credits}`);
  await worker.stop();
} finally {
  await svc.stop();
}
