import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, cliEnv, type LongRunning } from '../support/cli-run.ts';
import { freePort } from '../support/net.ts';
import { spawn } from 'node:child_process';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

// A checkout and a DATA_DIR under a folder only root can enter (a clone in `mktemp -d`, or under
// /root): PostgreSQL runs as `postgres`, which can reach neither the binaries nor the data.
let locked: string;
let checkout: string;
const started: LongRunning[] = [];
const homes: string[] = [];

beforeAll(async () => {
  if (!asRoot) return;
  // Under the repository, so node_modules can be hard-linked (same file system) instead of copied.
  locked = await fs.mkdtemp(path.join(ROOT, '.locked-'));
  await fs.chmod(locked, 0o700);
  checkout = path.join(locked, 'adforge');
  await fs.mkdir(checkout);
  for (const part of ['src', 'tasks', 'migrations', 'package.json']) await fs.cp(path.join(ROOT, part), path.join(checkout, part), { recursive: true });
  await run('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(checkout, 'node_modules')]);
}, 120_000);

afterAll(async () => {
  for (const s of started) if (s.running()) s.child.kill('SIGKILL');
  await Promise.all(started.map((s) => s.waitForExit(5_000)));
  for (const home of homes) {
    const pid = Number((await fs.readFile(path.join(home, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await fs.rm(home, { recursive: true, force: true });
  }
  if (locked) await fs.rm(locked, { recursive: true, force: true });
}, 60_000);

function startIn(dataDir: string, port: number, pgPort: number): LongRunning {
  const child = spawn(process.execPath, [path.join(checkout, 'src/cli/main.ts'), 'start'], {
    cwd: checkout,
    env: cliEnv({ DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), PG_PORT: String(pgPort), LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  let done = false;
  void exited.then(() => (done = true));
  const s: LongRunning = {
    child,
    pid: child.pid!,
    output: () => ({ stdout, stderr }),
    exited,
    running: () => !done,
    waitForExit: (ms) => Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), ms).unref())]),
    waitForStdout: async (pattern, ms) => {
      const until = Date.now() + ms;
      for (;;) {
        const m = stdout.match(pattern);
        if (m) return m;
        if (done || Date.now() > until) throw new Error(`no ${pattern}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
  started.push(s);
  return s;
}

describe.runIf(asRoot)('as root, with the checkout and DATA_DIR under a folder only root can enter', () => {
  it('npm start works: PostgreSQL gets its own copy of the binaries and a data home linked from DATA_DIR; no folder of the user is opened up', async () => {
    const dataDir = path.join(locked, 'data');
    const port = await freePort();
    const s = startIn(dataDir, port, await freePort());
    await s.waitForStdout(/adforge is running/, 60_000);
    const link = await fs.readlink(path.join(dataDir, 'pg'));
    homes.push(link);
    expect(link.startsWith('/var/lib/adforge/clusters/')).toBe(true);
    expect((await fs.stat(link)).mode & 0o777).toBe(0o700);

    const ca = await fs.readFile(path.join(dataDir, 'tls', 'self-signed-cert.pem'), 'utf8');
    const dispatcher = new Agent({ connect: { ca } });
    const res = await request(`https://127.0.0.1:${port}/healthz`, { dispatcher });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    await dispatcher.close();

    // The postgres server runs the copy of the binaries, not the checkout's.
    const pid = Number((await fs.readFile(path.join(link, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const exe = await fs.readlink(`/proc/${pid}/exe`);
    expect(exe.startsWith('/var/lib/adforge/postgres-binaries/')).toBe(true);
    expect((await fs.stat(locked)).mode & 0o777).toBe(0o700);

    s.child.kill('SIGTERM');
    expect(await s.waitForExit(20_000)).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('npm test works: the embedded cluster of the test run starts from a checkout postgres cannot enter', async () => {
    const script = [
      `import os from 'node:os'; import fs from 'node:fs/promises'; import path from 'node:path'; import pg from 'pg';`,
      `import { startEmbeddedPostgres } from './src/db/embedded.ts';`,
      `const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-locked-pg-')); await fs.chmod(dir, 0o755);`,
      `const h = await startEmbeddedPostgres({ dir: path.join(dir, 'pg') });`,
      `const c = new pg.Client(h.url('postgres')); await c.connect();`,
      `const r = await c.query('select 41 + 1 as n'); await c.end(); await h.stop(); await fs.rm(dir, { recursive: true, force: true });`,
      `console.log('answer', r.rows[0].n);`,
    ].join('\n');
    await fs.writeFile(path.join(checkout, 'probe.ts'), script);
    const { stdout } = await run(process.execPath, ['probe.ts'], { cwd: checkout, env: cliEnv({}), timeout: 60_000 });
    expect(stdout).toContain('answer 42');
  }, 90_000);

  it('a cluster already initialised where postgres cannot reach stops at once, naming the folder and the ways out', async () => {
    const other = path.join(locked, 'old-data');
    await fs.mkdir(path.join(other, 'pg'), { recursive: true });
    await fs.writeFile(path.join(other, 'pg', 'PG_VERSION'), '18\n');
    const s = startIn(other, await freePort(), await freePort());
    const exit = await s.waitForExit(30_000);
    expect(exit?.code).not.toBe(0);
    const { stderr, stdout } = s.output();
    const text = stderr + stdout;
    expect(text).toContain(`${locked} lets only its owner in`);
    expect(text).toMatch(/DATA_DIR/);
    expect(text).toMatch(/other than root/);
    expect(text).toMatch(/DATABASE_URL/);
  }, 60_000);
});
