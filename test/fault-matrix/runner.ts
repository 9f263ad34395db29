import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { buildApp, type App } from '../../src/app.ts';
import { startWorker, type WorkerRunner } from '../../src/worker.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { spawnCli, type LongRunning } from '../support/cli-run.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { advanceClock, queueState } from './clock.ts';
import { FAULTS, faultOf, type FaultId } from './faults.ts';
import { judge, moneyAndFiles, storedKeys, teamMoney } from './invariants.ts';
import { GENERATION } from './subjects.ts';
import type { MatrixCall, MatrixInputs, ProviderFakes, ProviderMatrix } from './provider-matrix.ts';
import { documentedTable, renderTable, writeDocumentedTable, type CellResult } from './table.ts';

/**
 * How long a provider call waits for an answer in the matrix (UPSTREAM_CALL_TIMEOUT_SECONDS, the
 * operator's cap on every call's own timeout), so that "no answer until the client gives up"
 * costs a cell a second and a half rather than the provider's minutes.
 */
const CLIENT_TIMEOUT_MS = 1500;
// A cell that has not settled in this much real time is reported as not ended.
const CELL_REAL_LIMIT_MS = 30_000;
// Nor one that needs the clock moved further than this past its deadline.
const VIRTUAL_LIMIT_MS = 3 * 3600_000;
// Cells run one after another; each gets its generation started, faulted and settled here.
const CELL_TIMEOUT_MS = CELL_REAL_LIMIT_MS + 20_000;
const CUED_WORKER = fileURLToPath(new URL('../support/cued-worker.ts', import.meta.url));

/** The service as an operator runs it, apart from the clients' timeouts (see CLIENT_TIMEOUT_MS). */
const MATRIX_ENV: Record<string, string> = {
  LOG_LEVEL: 'warn',
  UPSTREAM_CALL_TIMEOUT_SECONDS: String(CLIENT_TIMEOUT_MS / 1000),
  // The kill cells' fresh in-process worker notices the killed one within a second of moved time.
  WORKER_HEARTBEAT_SECONDS: '0.2',
};

/**
 * One provider's rows of the fault matrix as vitest tests, a test per cell (call x fault), run
 * one after another against one service, one worker and the provider's fakes behind a fault
 * proxy. Each cell starts a generation that makes the call, injects the fault into it, lets the
 * service run on (moving its clock over waits and deadlines), and checks, once nothing is left
 * queued or in flight: the provider accepted at most one billable job, the generation ended by
 * its deadline (completed, or failed and refunded exactly), the team's ledger equals its balance,
 * and nothing was left in storage that no row names. A last test prints the table and holds
 * docs/providers.md to it (FAULT_MATRIX_WRITE=1 writes it instead). FAULT_MATRIX_DEBUG=1 prints,
 * for each broken cell, the requests the proxy saw and the service's log (=all: for every cell).
 */
export function runFaultMatrix(m: ProviderMatrix): void {
  const results: CellResult[] = [];
  const subject = m.subject ?? GENERATION;
  const cells: Array<{ call: MatrixCall; fault: FaultId }> = [];
  let svc: TestService;
  let fakes: ProviderFakes;
  let proxy: FaultProxy;
  let host: Awaited<ReturnType<typeof startImageHost>>;
  let worker: WorkerRunner | undefined;
  /** The app the in-process worker runs on: the service's own, or one built for the cell (freshWorkerPerCell). */
  let workerApp: App;
  let env: Record<string, string>;
  let inputs: MatrixInputs;
  /** The worker process the next kill cell starts and kills, built ahead (see test/support/cued-worker.ts). */
  let nextChild: Promise<LongRunning> | undefined;
  const started = Date.now();

  const spawnCuedWorker = (): Promise<LongRunning> => {
    const child = spawnCli([], {
      DATABASE_URL: svc.databaseUrl,
      DATA_DIR: svc.dataDir,
      PUBLIC_BASE_URL: svc.baseUrl,
      ALLOW_PRIVATE_NETWORK_URLS: 'true',
      ...env,
    }, { entry: CUED_WORKER });
    return child.waitForStdout(/built/, 60_000).then(() => child);
  };
  // The kill cells not run yet (a -t filter that skips some leaves a worker built for nothing).
  let killCellsLeft = 0;
  /** A worker process built ahead for the next kill cell, when one is left to run. */
  const spawnNextChild = () => {
    nextChild = killCellsLeft > 0 ? spawnCuedWorker() : undefined;
    nextChild?.catch(() => {});
  };

  beforeAll(async () => {
    const clip = await testVideo({ width: 160, height: 90, seconds: 1 });
    host = await startImageHost({ '/face.png': sendBytes(await pngBytes(64, 64, '#c08050'), 'image/png'), '/clip.mp4': sendBytes(clip, 'video/mp4') });
    fakes = await m.start();
    proxy = await startFaultProxy(fakes.target);
    env = { ...MATRIX_ENV, ...fakes.env(proxy.url) };
    svc = await startTestService(env, { productionPolling: true });
    workerApp = svc.app;
    worker = await startWorker(workerApp);
    spawnNextChild();
    const avatar = await svc.app.db.selectFrom('avatars').select('id').where('avatar_type', '=', 'platform').orderBy('name').executeTakeFirstOrThrow();
    // One team for every cell: a cell's effect on it is read as what changed during the cell.
    const team = await svc.team({ credits: 100_000_000 });
    inputs = { svc, faceUrl: host.url('/face.png'), clipUrl: host.url('/clip.mp4'), avatarId: avatar.id, voiceId: VOICES[0]!.id, teamId: team.teamId, key: team.key, made: {} };
    inputs.made = (await m.prepare?.(inputs)) ?? {};
  }, 120_000);

  afterAll(async () => {
    const spare = await nextChild?.catch(() => undefined);
    spare?.child.kill('SIGKILL');
    await spare?.exited;
    await worker?.stop();
    if (workerApp && workerApp !== svc.app) await workerApp.close();
    await svc?.close();
    await proxy?.close();
    await fakes?.close();
    await host?.close();
  });

  /**
   * Lets the service run until `done` says so: while a job runs or is due, or a request is in
   * flight at the proxy, it waits; once all is still, it moves the clock to the next queued job
   * (or to the earliest deadline of the cell's generations, where it runs the sweeper as its cron
   * would). `swept`: the generations the sweeper ended.
   */
  async function drive(generationIds: readonly string[], done: () => Promise<boolean>): Promise<{ settled: boolean; swept: Set<string> }> {
    const db = svc.app.db;
    const until = Date.now() + CELL_REAL_LIMIT_MS;
    const swept = new Set<string>();
    let moved = 0;
    let still = 0;
    for (;;) {
      if (await done()) return { settled: true, swept };
      if (Date.now() > until || moved > VIRTUAL_LIMIT_MS) return { settled: false, swept };
      const q = await queueState(db);
      if (q.running || q.due || proxy.inFlight || fakes.busy?.()) {
        still = 0;
        await sleep(15);
        continue;
      }
      // Still twice in a row: nothing is on its way to the queue either.
      if (++still < 2) {
        await sleep(5);
        continue;
      }
      still = 0;
      const open = (await subject.rows(db, generationIds)).filter((r) => r.status === 'processing');
      const deadline = Math.min(...open.map((r) => r.deadline?.getTime() ?? Infinity));
      const now = Date.now();
      if (deadline <= now) {
        for (const id of await svc.app.services.maintenance.sweepOverdueGenerations()) swept.add(id);
        continue;
      }
      const next = Math.min(q.nextAt?.getTime() ?? Infinity, deadline);
      if (next === Infinity) return { settled: true, swept };
      const by = Math.max(1, next - now + 1);
      moved += by;
      await advanceClock(db, by);
    }
  }

  /** Every generation of the cell ended and nothing is left to run for them. */
  const settledFor = (generationIds: readonly string[]) => async () => {
    const q = await queueState(svc.app.db);
    if (q.running || q.due || q.nextAt || proxy.inFlight || fakes.busy?.()) return false;
    return (await subject.rows(svc.app.db, generationIds)).every((r) => r.status !== 'processing');
  };

  /** The cell's generations, made by a worker in a child process that is SIGKILLed once the provider has answered the faulted request. */
  async function killedWhileWaiting(create: () => Promise<string[]>): Promise<{ generationIds: string[]; killed: boolean }> {
    killCellsLeft--;
    const child = await (nextChild ?? spawnCuedWorker());
    await worker!.stop();
    worker = undefined;
    let held = false;
    proxy.onHeld(() => (held = true));
    try {
      child.child.kill('SIGUSR2');
      await child.waitForStdout(/working/, 30_000);
      const generationIds = await create();
      const { settled } = await drive(generationIds, async () => held || !child.running());
      const killed = settled && held;
      if (child.running()) child.child.kill('SIGKILL');
      await child.exited;
      return { generationIds, killed };
    } finally {
      proxy.onHeld(undefined);
      spawnNextChild();
      worker = await startWorker(workerApp);
      // The killed worker's heartbeat ages: its locks are released by the new worker's next beat.
      await advanceClock(svc.app.db, 10_000);
    }
  }

  /** A worker on an app built for this cell: what an engine remembers in memory (ComfyUI: which server has which routes) starts afresh. */
  async function freshWorker(): Promise<void> {
    await worker?.stop();
    if (workerApp !== svc.app) await workerApp.close();
    workerApp = await buildApp(svc.app.config, svc.app.log, { seed: false });
    worker = await startWorker(workerApp);
  }

  /** After a cell that threw: every generation of the team still processing is driven to its end. */
  async function settleLeftovers(): Promise<void> {
    if (!worker) worker = await startWorker(workerApp);
    const table = subject === GENERATION ? 'generations' : 'ad_library_scrape_jobs';
    const open = await svc.app.db.selectFrom(table).select('id').where('team_id', '=', inputs.teamId).where('status', '=', 'processing').execute();
    const ids = open.map((g) => g.id);
    if (ids.length) await drive(ids, settledFor(ids));
  }

  async function runCell(call: MatrixCall, faultId: FaultId): Promise<CellResult> {
    const fault = faultOf(faultId, { errorAnswer: (s, r) => m.errorAnswer(s, r), inProgress: call.inProgress });
    if (!fault) return { call: call.name, fault: faultId, outcome: 'n/a', broken: [] };
    const db = svc.app.db;
    if (m.freshWorkerPerCell) await freshWorker();
    // Each cell meets the provider as the only thing happening: no breaker, budget or rate-limit window left by the last one.
    await db.deleteFrom('engine_breakers').execute();
    await db.deleteFrom('upstream_poll_budgets').execute();
    await db.deleteFrom('rate_limit_hits').execute();
    const request = await call.create(inputs);
    const teamBefore = await teamMoney(db, inputs.teamId);
    const storageRoot = path.join(svc.dataDir, 'files');
    const before = await storedKeys(storageRoot);
    const billedBefore = fakes.billed();
    const logFrom = svc.logLines.length;
    const cellStart = Date.now();
    const proxyFrom = proxy.log.length;
    proxy.arm({ method: call.method, path: call.path, fault, ...(call.skip ? { skip: call.skip } : {}) });
    const create = async () => {
      const ids: string[] = [];
      for (let i = 0; i < (call.generations ?? 1); i++) {
        const res = await svc.api('POST', request.path, { key: inputs.key, body: request.body });
        if (res.status !== 202) throw new Error(`${request.path} answered ${res.status}: ${res.text}`);
        ids.push(subject.idOf(res.body));
      }
      return ids;
    };
    let generationIds: string[];
    let killedOk = true;
    if (faultId === 'kill') ({ generationIds, killed: killedOk } = await killedWhileWaiting(create));
    else generationIds = await create();
    const { settled, swept } = await drive(generationIds, settledFor(generationIds));
    const injected = proxy.injected !== undefined && killedOk;
    proxy.disarm();
    const billedAfter = fakes.billed();
    const billed = Object.fromEntries(Object.entries(billedAfter).map(([k, n]) => [k, n - (billedBefore[k] ?? 0)]));
    const money = await moneyAndFiles(db, { subject, ids: generationIds, swept, teamId: inputs.teamId, teamBefore, storageRoot, before });
    const verdict = judge({ ...money, noun: subject.noun, settled, injected, billed, units: call.units ?? {} });
    const detail = money.generations.map((g) => `${g.status}${g.error ? `: ${g.error}` : ''}`).join(' / ');
    if (process.env.FAULT_MATRIX_DEBUG && (verdict.broken.length || process.env.FAULT_MATRIX_DEBUG === 'all')) {
      console.log([`${call.name} / ${faultId}: ${Date.now() - cellStart} ms`, ...proxy.log.slice(proxyFrom).map((l) => `  proxy +${l.at - cellStart}ms: ${l.method} ${l.path} -> ${l.outcome}`), ...svc.logLines.slice(logFrom).map((l) => `  log: ${l.slice(0, 600)}`)].join('\n'));
    }
    return { call: call.name, fault: faultId, outcome: verdict.outcome, broken: verdict.broken, detail };
  }

  for (const call of m.calls) {
    for (const f of FAULTS) {
      cells.push({ call, fault: f.id });
      if (f.id === 'kill' && faultOf('kill', { errorAnswer: (st) => m.errorAnswer(st) })) killCellsLeft++;
      it(`${m.provider} ${call.name}: ${f.label}`, async () => {
        const r: CellResult = await runCell(call, f.id).catch(async (e: unknown): Promise<CellResult> => {
          // Whatever the cell left running is ended before the next cell, so that it is not counted there.
          proxy.disarm();
          await settleLeftovers();
          return { call: call.name, fault: f.id, outcome: 'error', broken: [{ short: 'error', detail: String(e instanceof Error ? e.stack : e) }] };
        });
        results.push(r);
        expect(r.broken.map((b) => `${b.short}: ${b.detail}`), `${r.outcome} (${r.detail ?? ''})`).toEqual([]);
      }, CELL_TIMEOUT_MS);
    }
  }

  it(`${m.provider}: the matrix as docs/providers.md shows it`, async () => {
    const table = renderTable(m.provider, m.calls.map((c) => c.name), results);
    const broken = results.filter((r) => r.broken.length);
    console.log(
      [`${m.provider}: ${results.length} cells in ${((Date.now() - started) / 1000).toFixed(1)} s`, table, ...broken.map((r) => `${r.call} / ${r.fault}: ${r.outcome} (${r.detail}): ${r.broken.map((b) => b.detail).join('; ')}`)].join('\n'),
    );
    // A run of some cells only (a -t filter) has no whole table to compare.
    if (results.length < cells.length) return;
    if (process.env.FAULT_MATRIX_WRITE === '1') await writeDocumentedTable(m.provider, table);
    else expect(await documentedTable(m.provider), 'docs/providers.md: run the matrix with FAULT_MATRIX_WRITE=1 to write its table').toBe(table);
  });
}

/** A voiceover of the cells' team (spoken once, by the service's speech engine): what its talking avatars say, short so that a lip-sync input made from it is quick to encode. */
export async function voiceover(i: MatrixInputs): Promise<string> {
  const res = await i.svc.api('POST', '/api/v1/voiceovers/text-to-speech', { key: i.key, body: { text: 'Hi there.', voice_id: i.voiceId } });
  if (res.status !== 201) throw new Error(`the voiceover was refused: ${res.status} ${res.text}`);
  return String(res.body.id);
}

/** A product of the cells' team whose small picture is a talking avatar's face (`avatar_type: product`). */
export async function productFace(i: MatrixInputs): Promise<string> {
  const res = await i.svc.api('POST', '/api/v1/products', { key: i.key, body: { name: 'Mug', description: 'A mug', category: 'home', image_url: i.faceUrl } });
  if (res.status !== 201) throw new Error(`the product was refused: ${res.status} ${res.text}`);
  return String(res.body.id);
}
