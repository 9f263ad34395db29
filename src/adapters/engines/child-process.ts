import { spawn } from 'node:child_process';

export interface ChildOptions {
  signal?: AbortSignal | undefined;
  /** Kill the process after this long; no limit when absent. */
  timeoutMs?: number | undefined;
  cwd?: string | undefined;
  /** Written to the child's stdin, which is then closed; without it stdin is ignored. */
  stdin?: string | Buffer | undefined;
  /** Stdout kept at most; what passes it is dropped, or (failOnOverflow) the child is killed. */
  maxStdout: number;
  failOnOverflow?: boolean;
  /** How much of the end of stderr is kept for diagnostics. */
  stderrTail: number;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

/** Why a child run produced no exit to look at; `stderr` is its diagnostics so far (not user-safe). */
export class ChildFailure extends Error {
  readonly kind: 'timeout' | 'spawn' | 'overflow';
  readonly stderr: string;
  constructor(kind: ChildFailure['kind'], message: string, stderr: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'ChildFailure';
    this.kind = kind;
    this.stderr = stderr;
  }
}

/**
 * A tool run that did not succeed, for one of the tool's own reasons (its subclass names the tool).
 * `stderr` is the tail of its diagnostics (may name paths: not user-safe).
 */
export class ToolError<Reason extends string> extends Error {
  readonly reason: Reason;
  readonly stderr: string;
  constructor(message: string, reason: Reason, stderr: string, cause?: unknown) {
    super(message, { cause });
    this.reason = reason;
    this.stderr = stderr;
  }
}

/**
 * Runs a tool as a separate process (GPL tools are run beside us, never linked) and resolves with
 * its exit, whatever the code. On abort it rejects with `signal.reason`, the AbortSignal convention.
 * A killed child is waited for (briefly) before rejecting, so the caller's cleanup of its working
 * directory does not race with a process that is still writing there.
 */
export function runChild(command: string, args: string[], opts: ChildOptions): Promise<ChildExit> {
  const { signal } = opts;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const child = spawn(command, args, { cwd: opts.cwd, stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let settled = false;
    let killed = false;

    const finish = (err: unknown, exit?: ChildExit) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err === undefined && exit) resolve(exit);
      else reject(err);
    };
    const killThen = (err: unknown) => {
      killed = true;
      child.kill('SIGKILL');
      const fallback = setTimeout(() => finish(err), 2000);
      child.once('close', () => {
        clearTimeout(fallback);
        finish(err);
      });
    };
    const onAbort = () => killThen(signal?.reason);
    const timer =
      opts.timeoutMs === undefined
        ? undefined
        : setTimeout(() => killThen(new ChildFailure('timeout', `timed out after ${opts.timeoutMs} ms`, stderr)), opts.timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout!.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes <= opts.maxStdout) stdout.push(chunk);
      else if (opts.failOnOverflow && !killed) killThen(new ChildFailure('overflow', 'produced too much output', stderr));
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-opts.stderrTail);
    });
    if (child.stdin) {
      // A child that dies before reading its input makes the write fail with EPIPE: 'close' reports it.
      child.stdin.on('error', () => {});
      child.stdin.end(opts.stdin);
    }
    child.on('error', (err) => finish(new ChildFailure('spawn', `could not be started: ${err.message}`, stderr, err)));
    child.on('close', (code, bySignal) => {
      if (!killed) finish(undefined, { code, signal: bySignal, stdout: Buffer.concat(stdout), stderr });
    });
  });
}

/** "exited with code 1: last | lines" for logs and errors. */
export function describeExit(exit: ChildExit, lines: number): string {
  const tail = exit.stderr.trim().split('\n').slice(-lines).join(' | ');
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  return tail ? `${how}: ${tail}` : how;
}
