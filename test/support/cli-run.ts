import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI_MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
export const CLI_BIN = fileURLToPath(new URL('../../bin/adforge.js', import.meta.url));

// Settings of the test runner's own environment that must not leak into the child's configuration.
const CONFIG_VARS = [
  'DATABASE_URL',
  'TEST_DATABASE_URL',
  'DATA_DIR',
  'PG_PORT',
  'PORT',
  'HOST',
  'PUBLIC_BASE_URL',
  'TLS_CERT_FILE',
  'TLS_KEY_FILE',
  'TRUST_PROXY',
  'LOG_LEVEL',
  'STORAGE',
  'FILES_SIGNING_SECRET',
  'NODE_OPTIONS',
  'METRICS_PORT',
  'METRICS_TOKEN',
];

/** The runner's environment without adforge's settings, plus `env` (an undefined value removes a variable). */
export function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  for (const k of CONFIG_VARS) delete out[k];
  // Test processes run side by side: no metrics listener on the shared default port unless asked.
  out.METRICS_PORT = '0';
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `adforge ARGS` to completion as a child process (Node 24 running src/cli/main.ts, or bin/adforge.js). */
export function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  opts: { entry?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [opts.entry ?? CLI_MAIN, ...args], {
      cwd: ROOT,
      env: cliEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`adforge ${args.join(' ')} did not finish in ${opts.timeoutMs ?? 20_000} ms\n${stdout}\n${stderr}`));
    }, opts.timeoutMs ?? 20_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The whole of stdout as one JSON value: anything else on stdout makes this throw. */
export function stdoutJson(r: CliResult): any {
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`stdout is not one JSON value (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
}

export interface LongRunning {
  child: ChildProcess;
  pid: number;
  output: () => { stdout: string; stderr: string };
  /** Resolves with stdout once it matches; rejects when the process exits first or the time runs out. */
  waitForStdout: (pattern: RegExp, timeoutMs: number) => Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the exit, or null when it has not exited within timeoutMs. */
  waitForExit: (timeoutMs: number) => Promise<{ code: number | null; signal: NodeJS.Signals | null } | null>;
  running: () => boolean;
}

/**
 * Starts `adforge ARGS` as a long-running child (e.g. `start`) whose output is collected: by default
 * Node 24 running src/cli/main.ts; `node` and `entry` choose another Node and script (bin/adforge.js),
 * `detached` makes it the leader of a process group of its own.
 */
export function spawnCli(
  args: string[],
  env: Record<string, string | undefined>,
  opts: { node?: string; entry?: string; detached?: boolean } = {},
): LongRunning {
  const child = spawn(opts.node ?? process.execPath, [opts.entry ?? CLI_MAIN, ...args], {
    cwd: ROOT,
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  let stdout = '';
  let stderr = '';
  let done = false;
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
    notify();
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
      notify();
    });
  });

  const waitForStdout = (pattern: RegExp, timeoutMs: number) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = stdout.match(pattern);
        if (m) finish(() => resolve(m));
        else if (done) finish(() => reject(new Error(`adforge exited before printing ${pattern}\nstdout:\n${stdout}\nstderr:\n${stderr}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no ${pattern} on stdout within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`))),
        timeoutMs,
      );
      const finish = (f: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        f();
      };
      listeners.add(check);
      check();
    });

  const waitForExit = (timeoutMs: number) =>
    Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), timeoutMs).unref())]);

  return {
    child,
    pid: child.pid!,
    output: () => ({ stdout, stderr }),
    waitForStdout,
    exited,
    waitForExit,
    running: () => !done,
  };
}

/** A live process; a zombie (exited, never reaped: an orphan under an init that does not reap) counts as gone. */
export async function processAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}

export async function waitUntil(cond: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
