import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processAlive, runCli, spawnCli, stdoutJson, waitUntil, type LongRunning } from '../support/cli-run.ts';
import { freePort } from '../support/net.ts';
import { plainRequest } from '../support/plain-http.ts';
import { UNLIMITED_RATE } from '../support/app.ts';

const EMBEDDED_DEFAULT_PORT = 54329;
const DEMO_KEY = /Its API key is shown only this once:\s+(service_sk_[0-9A-Za-z]{38})\s/;
const STARTUP_MS = 25_000;

let dataDir: string;
let pgDir: string;
let port: number;
let pgPort: number;
const children: LongRunning[] = [];
const blockers: net.Server[] = [];
let current: LongRunning | undefined;
let demoKey: string;
let ownerLink: string;
let teamMadeWhileRunning: string;
let firstPostgres: { pid: number; port: number } | null;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-start-'));
  // mkdtemp makes it 0700; as root, the cluster runs as the postgres user, who must be able to enter it.
  await fs.chmod(dataDir, 0o755);
  pgDir = path.join(dataDir, 'pg');
  port = await freePort();
  pgPort = await freePort();
});

afterAll(async () => {
  for (const c of children) if (c.running()) c.child.kill('SIGKILL');
  await Promise.all(children.map((c) => c.waitForExit(5_000)));
  await stopLeftoverPostgres();
  await Promise.all(blockers.map(close));
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
}, 30_000);

/** `adforge start` on the embedded PostgreSQL: no DATABASE_URL, this file's DATA_DIR. */
function start(env: Record<string, string | undefined> = {}): LongRunning {
  const s = spawnCli(['start'], {
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    PG_PORT: String(pgPort),
    LOG_LEVEL: 'warn',
    ...env,
  });
  children.push(s);
  current = s;
  return s;
}

async function startAndWait(env: Record<string, string | undefined> = {}): Promise<LongRunning> {
  const s = start(env);
  await s.waitForStdout(/adforge is running/, STARTUP_MS);
  return s;
}

async function readPostmaster(): Promise<{ pid: number; port: number } | null> {
  try {
    const lines = (await fs.readFile(path.join(pgDir, 'postmaster.pid'), 'utf8')).split('\n');
    return { pid: Number(lines[0]), port: Number(lines[3]) };
  } catch {
    return null;
  }
}

async function stopLeftoverPostgres(): Promise<void> {
  const pm = await readPostmaster();
  if (!pm || !(await processAlive(pm.pid))) return;
  // SIGINT is PostgreSQL's fast shutdown: it does not wait for clients to disconnect.
  process.kill(pm.pid, 'SIGINT');
  await waitUntil(async () => !(await processAlive(pm.pid)), 10_000, `postgres ${pm.pid} to stop`).catch(() => {
    process.kill(pm.pid, 'SIGKILL');
  });
}

async function stopCurrent(timeoutMs = 10_000): Promise<{ code: number | null; signal: NodeJS.Signals | null } | null> {
  const s = current!;
  s.child.kill('SIGTERM');
  return s.waitForExit(timeoutMs);
}

/** HTTPS to the service, trusting only the self-signed certificate it made in DATA_DIR/tls. */
async function get(p: string, key?: string): Promise<{ status: number; body: unknown }> {
  const ca = await fs.readFile(path.join(dataDir, 'tls', 'self-signed-cert.pem'), 'utf8');
  // A new agent per request: a kept-alive connection would not survive the restarts between tests.
  const dispatcher = new Agent({ connect: { ca } });
  try {
    const res = await request(`https://127.0.0.1:${port}${p}`, {
      headers: key ? { authorization: `Bearer ${key}` } : {},
      dispatcher,
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
  } finally {
    await dispatcher.close();
  }
}

async function queryEmbedded<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const pm = await readPostmaster();
  const client = new pg.Client(`postgres://postgres:adforge-embedded@127.0.0.1:${pm!.port}/adforge`);
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const EMPTY_PAGE = { data: [], pagination: { total: 0, limit: 20, offset: 0 } };

describe('adforge start on the embedded PostgreSQL', () => {
  it('first start: prints the base URLs and a demo API key', async () => {
    const s = start();
    await s.waitForStdout(/adforge is running/, STARTUP_MS);
    const m = await s.waitForStdout(DEMO_KEY, 10_000);
    demoKey = m[1]!;
    expect(s.output().stdout).toContain(`https://localhost:${port}/api/v1`);
    expect(s.output().stdout).toContain(`https://localhost:${port}/healthz`);
    expect(s.output().stdout).toContain(`dashboard https://localhost:${port}/`);
    // No provider is configured: the banner says plainly that the built-in renderer is a demo, not AI, and where to go next.
    expect(s.output().stdout).toMatch(/text-to-image\s+local \(demo, not AI\)\n/);
    expect(s.output().stdout).toContain('DEMO MODE: no AI provider is connected');
    expect(s.output().stdout).toMatch(/docs\/providers\.md.*docs\/gpu\.md/);
    expect(s.output().stdout.match(/it is not AI/g)).toHaveLength(1); // said once, then what to do
    const link = await s.waitForStdout(/(https:\/\/localhost:\d+\/welcome#[A-Za-z0-9_-]{43})\s/, 10_000);
    ownerLink = link[1]!;
  }, 40_000);

  it("the printed one-time link signs the demo team's owner in to the dashboard", async () => {
    const ca = await fs.readFile(path.join(dataDir, 'tls', 'self-signed-cert.pem'), 'utf8');
    const dispatcher = new Agent({ connect: { ca } });
    try {
      const page = await request(`https://127.0.0.1:${port}/`, { headers: { accept: 'text/html' }, dispatcher });
      expect(page.statusCode).toBe(200);
      expect(await page.body.text()).toMatch(/<script type="module" crossorigin src="\/assets\//);
      const res = await request(`https://127.0.0.1:${port}/auth/welcome`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: ownerLink.split('#')[1], password: 'demo owner password' }),
        dispatcher,
      });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toMatchObject({ user: { email: 'owner@demo.adforge.local', role: 'owner' }, team: { name: 'Demo team' } });
    } finally {
      await dispatcher.close();
    }
  });

  it('serves GET /api/v1/products over HTTPS with the demo key: an empty first page', async () => {
    const res = await get('/api/v1/products', demoKey);
    expect(res).toEqual({ status: 200, body: EMPTY_PAGE });
  });

  it('serves GET /healthz, saying which engine makes each operation and that the built-in one is a demo', async () => {
    const res = await get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', demo: true, demo_note: expect.stringMatching(/not AI.*docs\/gpu\.md/) });
    const { engines } = res.body as { engines: unknown[] };
    expect(engines).toHaveLength(8);
    expect(engines).toContainEqual({ operation: 'text-to-image', kind: 'image', engines: ['local'], demo: true, demo_fallback: false, models: [] });
  });

  it('adforge engines says who makes what: here the built-in demo renderer, not AI, and how to connect a provider', async () => {
    const r = await runCli(['engines'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^who makes what\n {2}talking-avatar\s+local \(demo, not AI\)\n/);
    expect(r.stdout).toMatch(/\n {2}video-edit\s+local \(demo, not AI\)\n/);
    expect(r.stdout).toMatch(/it is not AI\. For real AI, set a provider key and ENGINE_ROUTES \(docs\/providers\.md\)/);
    expect(r.stdout).toMatch(/\nroutes +\[\{"key":"\*","engines":\["local"\]\}\]\n/);
    const json = stdoutJson(await runCli(['engines', '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
    expect(json.operations).toHaveLength(8);
    expect(json.operations[0]).toMatchObject({ operation: 'talking-avatar', engines: ['local'], demo: true });
  });

  it('refuses plain HTTP on the same port with 403 "HTTPS is required"', async () => {
    const res = await plainRequest(port, 'GET', '/api/v1/products', { authorization: `Bearer ${demoKey}` });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { code: 'forbidden', message: 'HTTPS is required' } });
  });

  it('lets the CLI work on the same DATA_DIR while it runs, and keeps serving afterwards', async () => {
    const r = await runCli(['team', 'create', '--name', 'Made while running', '--json'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    expect(r.code, r.stderr).toBe(0);
    teamMadeWhileRunning = stdoutJson(r).id;
    expect(teamMadeWhileRunning).toMatch(/^[0-9a-f-]{36}$/);
    // The CLI attached to the server's cluster; it must not have stopped it on exit.
    expect((await get('/api/v1/products', demoKey)).status).toBe(200);
  }, 20_000);

  it('SIGTERM: exits 0 within a few seconds', async () => {
    firstPostgres = await readPostmaster();
    expect(firstPostgres).not.toBeNull();
    const exit = await stopCurrent(5_000);
    expect(exit, `did not exit\n${current!.output().stderr}`).not.toBeNull();
    expect(exit).toEqual({ code: 0, signal: null });
  }, 15_000);

  it('SIGTERM: drains in order, the worker and its connections before PostgreSQL, so nothing is logged as an error', async () => {
    // LOG_LEVEL=warn: pino writes a JSON line per warning or error to stdout.
    const errors = current!.output().stdout.split('\n').filter((l) => /"level":(50|60)/.test(l));
    expect(errors).toEqual([]);
  });

  it('SIGTERM: stops the PostgreSQL it started', async () => {
    await waitUntil(async () => (await readPostmaster()) === null, 5_000, 'postmaster.pid to disappear');
    expect(await processAlive(firstPostgres!.pid)).toBe(false);
  }, 10_000);

  it('a second start reuses the data: no new demo key; the demo key and the earlier team are still there', async () => {
    const s = await startAndWait();
    expect((await get('/api/v1/products', demoKey)).status).toBe(200);
    const teams = await queryEmbedded<{ name: string }>('select name from teams where id = $1', [teamMadeWhileRunning]);
    expect(teams).toEqual([{ name: 'Made while running' }]);
    const demos = await queryEmbedded(`select 1 from teams where name = 'Demo team'`);
    expect(demos).toHaveLength(1);
    // The demo check runs right after the "running" banner; give it time to print if it (wrongly) would.
    await new Promise((r) => setTimeout(r, 500));
    expect(s.output().stdout).not.toMatch(/service_sk_|demo team was created/i);
  }, 40_000);

  it('the embedded PostgreSQL SIGKILLed under load: 503 while it is down (never a 500), restarted and logged, serving again, nothing accepted lost, charged once', async () => {
    expect(await stopCurrent()).not.toBeNull();
    await waitUntil(async () => (await readPostmaster()) === null, 10_000, 'the cluster to stop');
    const s = await startAndWait({ RATE_LIMIT_TIERS: UNLIMITED_RATE, WORKER_HEARTBEAT_SECONDS: '1' });
    await queryEmbedded(`update teams set credits_limit = 1000000 where name = 'Demo team'`);
    const ca = await fs.readFile(path.join(dataDir, 'tls', 'self-signed-cert.pem'), 'utf8');
    const dispatcher = new Agent({ connect: { ca } });
    const seen: { status: number; at: number; path: string }[] = [];
    const accepted: string[] = [];
    const send = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
      try {
        const res = await request(`https://127.0.0.1:${port}${p}`, {
          method,
          headers: { authorization: `Bearer ${demoKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
          dispatcher,
        });
        const text = await res.body.text();
        seen.push({ status: res.statusCode, at: Date.now(), path: p });
        return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
      } catch {
        seen.push({ status: 0, at: Date.now(), path: p });
        return { status: 0, body: undefined };
      }
    };
    let loading = true;
    const loops = Array.from({ length: 4 }, async (_, i) => {
      for (let n = 0; loading; n++) {
        const r = await send('POST', '/api/v1/images/text-to-image', { model: 'fast', prompt: `load ${i}-${n}`, aspect_ratio: '1:1' });
        if (r.status === 202) accepted.push(r.body.generation_id);
        await send('GET', '/api/v1/products');
      }
    });
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const killed = (await readPostmaster())!;
      process.kill(killed.pid, 'SIGKILL');
      const killedAt = Date.now();
      await waitUntil(async () => (await get('/healthz')).status === 200 && (await get('/readyz')).status === 503, 10_000, '/readyz to say 503 while /healthz says 200');
      await waitUntil(async () => (await get('/readyz')).status === 200, 30_000, 'the service to be ready again');
      const readyAt = Date.now();
      const restarted = await readPostmaster();
      expect(restarted!.pid).not.toBe(killed.pid);
      await new Promise((r) => setTimeout(r, 1500));
      loading = false;
      await Promise.all(loops);

      const statuses = new Set(seen.map((x) => x.status));
      expect([...statuses].filter((st) => ![200, 202, 503].includes(st)), JSON.stringify(seen.filter((x) => ![200, 202, 503].includes(x.status)))).toEqual([]);
      expect(seen.some((x) => x.status === 503 && x.at > killedAt)).toBe(true);
      expect(seen.some((x) => x.status === 202 && x.at > readyAt)).toBe(true);
      expect(s.output().stdout).toMatch(/the embedded PostgreSQL \(pid \d+\) stopped unexpectedly \(SIGKILL\); restarting it/);
      expect(s.output().stdout).toMatch(/the embedded PostgreSQL is running again/);

      // Every create that was answered 202 exists, is finished by the reconnected worker and is charged once.
      await waitUntil(
        async () => Number((await queryEmbedded<{ n: string }>(`select count(*) as n from generations where id = any($1) and status = 'completed'`, [accepted]))[0]!.n) === accepted.length,
        60_000,
        'every accepted generation to complete',
      );
      const debits = await queryEmbedded<{ n: string }>(`select count(*) as n from credit_ledger where kind = 'debit' and subject_id = any($1)`, [accepted]);
      expect(Number(debits[0]!.n)).toBe(accepted.length);
      const [team] = await queryEmbedded<{ used: number; sum: number }>(
        `select t.credits_used as used, coalesce((select sum(amount) from credit_ledger l where l.team_id = t.id), 0)::int as sum from teams t where name = 'Demo team'`,
      );
      expect(team!.used).toBe(team!.sum);
    } catch (e) {
      // What the service said is the first thing to read when this fails.
      const out = s.output();
      throw new Error(`${(e as Error).message}\n--- stderr ---\n${out.stderr.slice(-3000)}\n--- stdout (last lines) ---\n${out.stdout.split('\n').slice(-15).join('\n').slice(0, 4000)}`, { cause: e });
    } finally {
      loading = false;
      await Promise.all(loops);
      await dispatcher.close();
    }
  }, 120_000);

  it('after a crash (SIGKILL) the orphaned PostgreSQL keeps running and the next start attaches to it', async () => {
    const before = await readPostmaster();
    current!.child.kill('SIGKILL');
    expect(await current!.waitForExit(5_000)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await processAlive(before!.pid)).toBe(true);

    await startAndWait();
    expect((await get('/api/v1/products', demoKey)).status).toBe(200);
    expect((await readPostmaster())?.pid).toBe(before!.pid);
  }, 40_000);

  it('a stale postmaster.pid (its process gone) is cleared and the next start serves', async () => {
    // The attached server leaves the cluster running on exit: stop both, then fake a crash's leftover pid file.
    expect(await stopCurrent()).not.toBeNull();
    await stopLeftoverPostgres();
    expect(await readPostmaster()).toBeNull();
    await fs.writeFile(path.join(pgDir, 'postmaster.pid'), `999999\n${pgDir}\n1700000000\n${pgPort}\n\n127.0.0.1\n  5432001     0\nready   \n`);

    await startAndWait();
    expect((await get('/api/v1/products', demoKey)).status).toBe(200);
    const pm = await readPostmaster();
    expect(pm?.pid).not.toBe(999999);
    expect(await processAlive(pm!.pid)).toBe(true);
  }, 40_000);

  it('an explicit PG_PORT taken by another program: exits non-zero naming PG_PORT and the port', async () => {
    expect(await stopCurrent()).not.toBeNull();
    await waitUntil(async () => (await readPostmaster()) === null, 10_000, 'the cluster to stop');
    const blocker = await listen(pgPort);
    blockers.push(blocker);

    const s = start();
    const exit = await s.waitForExit(STARTUP_MS);
    await close(blocker);
    expect(exit, 'still running with PG_PORT taken').not.toBeNull();
    expect(exit!.code).not.toBe(0);
    expect(s.output().stderr).toContain(`PG_PORT ${pgPort}`);
    expect(s.output().stdout).not.toContain('adforge is running');
  }, 40_000);

  it('without PG_PORT, a taken default port is replaced by a free one', async () => {
    // Taken either by us or by whatever already holds it: both are "another program".
    const blocker = await listen(EMBEDDED_DEFAULT_PORT).catch(() => null);
    if (blocker) blockers.push(blocker);

    try {
      await startAndWait({ PG_PORT: undefined });
    } finally {
      if (blocker) await close(blocker);
    }
    expect((await get('/api/v1/products', demoKey)).status).toBe(200);
    const pm = await readPostmaster();
    expect(pm?.port).not.toBe(EMBEDDED_DEFAULT_PORT);
    expect(await stopCurrent()).not.toBeNull();
  }, 40_000);
});

function listen(p: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer((socket) => socket.destroy());
    srv.once('error', reject);
    srv.listen(p, '127.0.0.1', () => resolve(srv));
  });
}

function close(srv: net.Server): Promise<void> {
  return new Promise((resolve) => (srv.listening ? srv.close(() => resolve()) : resolve()));
}
