import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { CLI_BIN, processAlive, spawnCli, waitUntil, type LongRunning } from '../support/cli-run.ts';
import { pngBytes, startImageHost } from '../support/image-host.ts';
import { freePort } from '../support/net.ts';

// bin/adforge.js on a Node older than 22.18 runs the service as a child under the pinned Node 24
// (node_modules/node/bin/node). A signal meant for the service reaches the process the operator
// started, the wrapper: the service must still drain, the wrapper must exit as the service did, and
// no process of the service (the child Node, the embedded PostgreSQL) may outlive it.
//
// The test needs a Node older than 22.18 to run the wrapper with, so that it really takes the
// re-run path: the one named by ADFORGE_TEST_OLD_NODE, else the Node that runs npm (npm tells its
// scripts and `npx` its path: on a machine whose own Node is older, as CI's is), else a `node` on
// PATH outside node_modules. Without one it fails and says so: passing without running the wrapper's
// re-run would prove nothing.

const PINNED = realpathSync(new URL('../../node_modules/node/bin/node', import.meta.url));
const STARTUP_MS = 30_000;

function olderThan2218(version: string): boolean {
  const [major, minor] = version.split('.').map(Number) as [number, number];
  return major < 22 || (major === 22 && minor < 18);
}

function findOldNode(): { node: string; version: string } {
  const candidates = [
    process.env.ADFORGE_TEST_OLD_NODE,
    process.env.npm_node_execpath,
    ...(process.env.PATH ?? '')
      .split(path.delimiter)
      .filter((d) => d && !d.split(path.sep).includes('node_modules'))
      .map((d) => path.join(d, 'node')),
    '/usr/bin/node',
    '/usr/local/bin/node',
  ].filter((c): c is string => !!c && existsSync(c));
  const tried: string[] = [];
  for (const c of new Set(candidates.map((c) => realpathSync(c)))) {
    let version: string;
    try {
      version = execFileSync(c, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 10_000 }).trim();
    } catch {
      tried.push(`${c} (does not run)`);
      continue;
    }
    if (olderThan2218(version)) return { node: c, version };
    tried.push(`${c} (${version})`);
  }
  throw new Error(
    `no Node older than 22.18 found to run bin/adforge.js with (tried: ${tried.join(', ') || 'none'}); ` +
      'this test checks the path a machine with an old Node takes: set ADFORGE_TEST_OLD_NODE to the path of one (e.g. a Node 20 binary)',
  );
}

/** pid → parent pid of every process, from /proc. */
async function parents(): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8');
      out.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function descendants(pid: number): Promise<number[]> {
  const ppid = await parents();
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    for (const [child, parent] of ppid) if (parent === p) (found.push(child), queue.push(child));
  }
  return found;
}

async function pgrp(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

async function exe(pid: number): Promise<string | null> {
  return fs.readlink(`/proc/${pid}/exe`).catch(() => null);
}

let oldNode: { node: string; version: string };
const dirs: string[] = [];
const started: { run: LongRunning; pids: number[]; postmaster: number }[] = [];

beforeAll(() => {
  oldNode = findOldNode();
});

afterAll(async () => {
  for (const s of started) {
    if (s.run.running()) s.run.child.kill('SIGKILL');
    for (const pid of s.pids) if (pid !== s.postmaster && (await exe(pid)) === PINNED) process.kill(pid, 'SIGKILL');
    if (s.postmaster && (await processAlive(s.postmaster))) {
      // SIGINT is PostgreSQL's fast shutdown.
      process.kill(s.postmaster, 'SIGINT');
      await waitUntil(async () => !(await processAlive(s.postmaster)), 10_000, 'postgres to stop').catch(() => process.kill(s.postmaster, 'SIGKILL'));
    }
  }
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
}, 30_000);

/**
 * `adforge start` through bin/adforge.js under the old Node, on a fresh DATA_DIR, waited for until
 * its last line (the demo team's sign-in link); returns it with every process it started.
 */
async function startThroughWrapper(opts: { detached?: boolean; env?: Record<string, string> } = {}) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-wrapper-'));
  dirs.push(dataDir);
  // mkdtemp makes it 0700; as root, the cluster runs as the postgres user, who must be able to enter it.
  await fs.chmod(dataDir, 0o755);
  const port = await freePort();
  const run = spawnCli(
    ['start'],
    { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), PG_PORT: String(await freePort()), LOG_LEVEL: 'info', ...opts.env },
    { node: oldNode.node, entry: CLI_BIN, detached: opts.detached },
  );
  const entry = { run, pids: [] as number[], postmaster: 0 };
  started.push(entry);
  await run.waitForStdout(/adforge is running/, STARTUP_MS);
  await run.waitForStdout(/\/welcome#[A-Za-z0-9_-]{43}\s/, 10_000);

  const pids = await descendants(run.pid);
  const postmaster = Number((await fs.readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  entry.pids = pids;
  entry.postmaster = postmaster;
  // The wrapper really re-ran the CLI under the pinned Node, whose child is the postmaster.
  expect(await exe(run.pid)).toBe(oldNode.node);
  const service = (await Promise.all(pids.map(async (p) => ((await exe(p)) === PINNED ? p : null)))).filter((p) => p !== null);
  expect(service).toHaveLength(1);
  expect(pids).toContain(postmaster);
  return { run, pids, postmaster, dataDir, port };
}

const lines = (run: LongRunning, msg: string) =>
  run
    .output()
    .stdout.split('\n')
    .filter((l) => l.startsWith('{') && (JSON.parse(l) as { msg?: string }).msg === msg);

async function noneAlive(pids: number[]): Promise<number[]> {
  const alive: number[] = [];
  for (const p of pids) if (await processAlive(p)) alive.push(p);
  return alive;
}

describe(`bin/adforge.js on a Node older than 22.18`, () => {
  it('SIGTERM to the wrapper: the service drains, the wrapper exits 0 as the service does, nothing of the service is left', async () => {
    const { run, pids } = await startThroughWrapper();
    run.child.kill('SIGTERM');
    const exit = await run.waitForExit(30_000);
    // Whatever the exit, the processes of the service are looked at before the assertions.
    const left = await noneAlive(pids);
    expect(exit, `${run.output().stdout}\n${run.output().stderr}`).toEqual({ code: 0, signal: null });
    expect(lines(run, 'shutting down: draining')).toHaveLength(1);
    expect(lines(run, 'drained; exiting')).toHaveLength(1);
    expect(left).toEqual([]);
  }, 60_000);

  it('SIGINT to the whole process group (a terminal\'s Ctrl-C, `timeout`, a group stop): one drain that lets a request finish, exit 0, nothing left', async () => {
    const png = await pngBytes();
    // An image host slow enough that a product create is still open when the signal comes.
    const host = await startImageHost({
      '/slow.png': (_req, res) => {
        setTimeout(() => res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png), 1500);
      },
    });
    try {
      const { run, pids, postmaster, dataDir, port } = await startThroughWrapper({ detached: true, env: { ALLOW_PRIVATE_NETWORK_URLS: 'true' } });
      const key = run.output().stdout.match(/service_sk_[0-9A-Za-z]{38}/)![0];
      const dispatcher = new Agent({ connect: { ca: await fs.readFile(path.join(dataDir, 'tls', 'self-signed-cert.pem'), 'utf8') } });
      const open = request(`https://127.0.0.1:${port}/api/v1/products`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Interrupted', description: 'Sold while the service drains', category: 'test', image_url: host.url('/slow.png') }),
        dispatcher,
      });
      await waitUntil(() => host.hits.includes('/slow.png'), 10_000, 'the create to fetch its image');
      // The wrapper leads its own group here: a signal to the group reaches the wrapper and the
      // service at once, and the wrapper passes its copy on as well. The embedded PostgreSQL is
      // the service's to stop after the drain (SIGINT is its fast shutdown, which would end the
      // open request's session).
      expect(await pgrp(postmaster), 'the embedded PostgreSQL in a process group of its own').not.toBe(run.pid);
      process.kill(-run.pid, 'SIGINT');
      const res = await open;
      const body = await res.body.text();
      await dispatcher.close();
      const exit = await run.waitForExit(30_000);
      const left = await noneAlive(pids);
      expect(res.statusCode, body).toBe(201);
      expect(exit, `${run.output().stdout}\n${run.output().stderr}`).toEqual({ code: 0, signal: null });
      expect(lines(run, 'shutting down: draining')).toHaveLength(1);
      expect(lines(run, 'drained; exiting')).toHaveLength(1);
      expect(left).toEqual([]);
      expect(run.output().stdout).not.toMatch(/embedded PostgreSQL \(pid \d+\) stopped unexpectedly/);
    } finally {
      await host.close();
    }
  }, 60_000);

  it('SIGHUP to the wrapper (a closed terminal): the service drains instead of dying with its PostgreSQL left running', async () => {
    const { run, pids } = await startThroughWrapper();
    run.child.kill('SIGHUP');
    const exit = await run.waitForExit(30_000);
    const left = await noneAlive(pids);
    expect(exit, `${run.output().stdout}\n${run.output().stderr}`).toEqual({ code: 0, signal: null });
    expect(lines(run, 'drained; exiting')).toHaveLength(1);
    expect(left).toEqual([]);
  }, 60_000);

  it('a service killed by a signal ends the wrapper by the same signal, as the service itself would end', async () => {
    // A database that takes the connection and never answers holds the worker in its start.
    const silent = net.createServer(() => {}).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const run = spawnCli(
        ['worker'],
        { DATABASE_URL: `postgres://adforge:x@127.0.0.1:${(silent.address() as net.AddressInfo).port}/adforge`, LOG_LEVEL: 'warn' },
        { node: oldNode.node, entry: CLI_BIN },
      );
      started.push({ run, pids: [], postmaster: 0 });
      let service: number | undefined;
      await waitUntil(
        async () => {
          for (const p of await descendants(run.pid)) if ((await exe(p)) === PINNED) service = p;
          return service !== undefined;
        },
        10_000,
        'the service under the pinned Node',
      );
      process.kill(service!, 'SIGKILL');
      expect(await run.waitForExit(10_000)).toEqual({ code: null, signal: 'SIGKILL' });
    } finally {
      silent.close();
    }
  }, 30_000);
});
