import fs from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { freePort, portIsFree } from './ports.ts';
import { initdb, packagedBinaries, startServer, type RunningServer, type ServerOptions } from './postgres-server.ts';
import { exists, postgresUser, reachableBinaries, reachableDataDir, runningAsRoot } from './postgres-user.ts';

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
  /** The cluster died and is being restarted: worth a warning in the service's log. */
  alert?: (line: string) => void;
  /** First wait before a restart (doubled after each failed one, up to 30 s). */
  restartDelayMs?: number;
}): Promise<EmbeddedHandle> {
  const log = opts.log ?? (() => {});
  const alert = opts.alert ?? log;
  await fs.mkdir(path.dirname(path.resolve(opts.dir)), { recursive: true });
  const runAs = runningAsRoot() ? await postgresUser() : undefined;
  // As root the cluster may live in a home of its own, linked from opts.dir (see postgres-user.ts).
  const dir = runAs ? await reachableDataDir(path.resolve(opts.dir), runAs) : path.resolve(opts.dir);
  if (dir !== path.resolve(opts.dir)) log(`the embedded PostgreSQL keeps its data in ${dir} (linked from ${opts.dir}): the postgres user cannot enter ${opts.dir}`);

  const running = await runningCluster(dir);
  if (running) {
    log(`attaching to the embedded PostgreSQL already running on port ${running.port} (pid ${running.pid})`);
    return handle(running.port, false, async () => {});
  }

  const packaged = await packagedBinaries();
  const binaries = runAs ? await reachableBinaries(packaged, runAs) : packaged;
  const server = (output: string[]): ServerOptions => ({
    binaries,
    dataDir: dir,
    runAs,
    output: (m) => {
      output.push(m);
      if (output.length > 50) output.shift();
    },
  });
  if (!(await exists(path.join(dir, 'PG_VERSION')))) {
    log(`initialising a new PostgreSQL cluster in ${dir}`);
    await fs.rm(dir, { recursive: true, force: true });
    await initdb(server([]), USER, PASSWORD);
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
    try {
      const pg = await startServer(server(output), port, FLAGS);
      log(`embedded PostgreSQL started on port ${port}`);
      const supervisor = supervise(pg, () => startServer(server([]), port, FLAGS), { alert, firstDelayMs: opts.restartDelayMs ?? 500 });
      return handle(port, true, supervisor.stop);
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

/**
 * adforge started the cluster, so it is its only supervisor: a postmaster that dies (killed, out of
 * memory) is started again on the same port and data, where PostgreSQL's crash recovery replays its
 * log, with a backoff while it fails (its orphaned backends can hold the shared memory a moment).
 * Until then the service answers 503 and its pool reconnects by itself.
 */
function supervise(
  first: RunningServer,
  restart: () => Promise<RunningServer>,
  opts: { alert: (line: string) => void; firstDelayMs: number },
): { stop: () => Promise<void> } {
  let current: RunningServer | undefined = first;
  let stopping = false;
  const stopped = new AbortController();
  let restarting: Promise<void> | undefined;
  const watch = (server: RunningServer) => {
    void server.exited.then((exit) => {
      if (stopping) return;
      current = undefined;
      opts.alert(`the embedded PostgreSQL (pid ${server.pid}) stopped unexpectedly (${exit.signal ?? `exit code ${exit.code}`}); restarting it`);
      restarting = again();
    });
  };
  const again = async () => {
    for (let delay = opts.firstDelayMs, attempt = 1; !stopping; delay = Math.min(delay * 2, 30_000), attempt++) {
      const waited = await sleep(delay, true, { signal: stopped.signal }).catch(() => false);
      if (!waited) return;
      try {
        const server = await restart();
        if (stopping) return void (await server.stop());
        current = server;
        opts.alert(`the embedded PostgreSQL is running again (pid ${server.pid}, restart attempt ${attempt})`);
        watch(server);
        return;
      } catch (e) {
        opts.alert(`restarting the embedded PostgreSQL failed (attempt ${attempt}): ${(e as Error).message}; next try in ${Math.min(delay * 2, 30_000)} ms`);
      }
    }
  };
  watch(first);
  return {
    stop: async () => {
      stopping = true;
      stopped.abort();
      await restarting;
      await current?.stop();
    },
  };
}

const FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];

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
