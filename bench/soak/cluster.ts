import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from '../../src/db/ports.ts';
import { startEmbeddedPostgres, type EmbeddedHandle } from '../../src/db/embedded.ts';
import { spawnCli, type LongRunning } from '../../test/support/cli-run.ts';

/**
 * The soak's service: its own PostgreSQL (supervised by this process, as `npm start` does, so a
 * killed postmaster comes back), two `adforge serve` and two `adforge worker` processes sharing a
 * data directory, each restartable by the chaos loop.
 */
export interface Node {
  name: string;
  role: 'serve' | 'worker';
  port: number | undefined;
  proc: LongRunning | undefined;
  /** In the balancer's rotation: from ready until the chaos loop stops the node. */
  serving: boolean;
}

export async function startPostgres(dir: string, log: (line: string) => void): Promise<{ handle: EmbeddedHandle; url: string; pidFile: string }> {
  const pgDir = path.join(dir, 'pg');
  const handle = await startEmbeddedPostgres({ dir: pgDir, port: await freePort(), log: () => {}, alert: log, restartDelayMs: 300 });
  const admin = new pg.Client(handle.url('postgres'));
  await admin.connect();
  await admin.query('create database adforge').catch(() => {});
  await admin.end();
  // As root the cluster may live elsewhere, linked from pgDir: the pid file is read through the link.
  return { handle, url: handle.url('adforge'), pidFile: path.join(await fs.realpath(pgDir), 'postmaster.pid') };
}

/**
 * `work` on a connection of its own, or undefined when the database cannot be reached or the work
 * fails (the chaos loop may be restarting it): the soak's own reads never wait on the service's pool.
 */
export async function onDatabase<T>(url: string, work: (c: pg.Client) => Promise<T>, timeoutMs = 3000): Promise<T | undefined> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, statement_timeout: 20_000 });
  c.on('error', () => {});
  try {
    await c.connect();
    return await work(c);
  } catch {
    return undefined;
  } finally {
    await c.end().catch(() => {});
  }
}

export function createNodes(env: Record<string, string>) {
  const nodes: Node[] = [];
  const add = (name: string, role: Node['role'], port?: number) => nodes.push({ name, role, port, proc: undefined, serving: false });

  async function start(node: Node): Promise<void> {
    const own = node.port ? { PORT: String(node.port), PUBLIC_BASE_URL: `https://127.0.0.1:${node.port}` } : {};
    node.proc = spawnCli([node.role], { ...env, ...own });
    if (node.role === 'serve') await node.proc.waitForStdout(/adforge is running/, 60_000);
    else await sleep(1000);
    node.serving = true;
  }

  async function stop(node: Node, signal: NodeJS.Signals): Promise<void> {
    const proc = node.proc;
    // A balancer takes a node out of rotation as its readiness fails; here, as it is stopped.
    node.serving = false;
    if (!proc || !proc.running()) return;
    proc.child.kill(signal);
    const exit = await proc.waitForExit(30_000);
    if (!exit) {
      proc.child.kill('SIGKILL');
      await proc.waitForExit(5_000);
    }
  }

  return {
    nodes,
    add,
    start,
    stop,
    api: () => nodes.filter((n) => n.role === 'serve'),
    workers: () => nodes.filter((n) => n.role === 'worker'),
    async stopAll(): Promise<void> {
      await Promise.all(nodes.map((n) => stop(n, 'SIGTERM')));
    },
  };
}
export type Nodes = ReturnType<typeof createNodes>;
