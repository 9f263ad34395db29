import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/*
 * Runs eSpeak NG in a child Node process (espeak-child.ts). The synthesizer is GPL: it is never
 * imported into this process, only run beside it, like ffmpeg.
 */

const CHILD = fileURLToPath(new URL('./espeak-child.ts', import.meta.url));
/** Far above what a few thousand characters make (~200 s of 16-bit 22 kHz mono is ~9 MB). */
const WAV_MAX_BYTES = 64 * 1024 * 1024;
const STDERR_TAIL = 4 * 1024;
const UNKNOWN_VOICE = 2;

export interface EspeakRequest {
  text: string;
  /** eSpeak's voice name: a language, optionally "+variant", e.g. `en-us+f3`. */
  voice: string;
  /** eSpeak's pitch scale, 0-99 (50 is the voice's own). */
  pitch: number;
  /** Words per minute (eSpeak's default is 175). */
  wpm: number;
}

export type EspeakFailure = 'unknown-voice' | 'failed';

/** A synthesizer run that did not succeed. `stderr` is diagnostics, not for users. */
export class EspeakError extends Error {
  readonly reason: EspeakFailure;
  readonly stderr: string;
  constructor(message: string, reason: EspeakFailure, stderr: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'EspeakError';
    this.reason = reason;
    this.stderr = stderr;
  }
}

/**
 * Speaks `req` into a WAV (16-bit mono, 22050 Hz). On abort the child is killed (SIGKILL) and
 * awaited, then this rejects with `signal.reason`, the AbortSignal convention.
 */
export function runEspeak(req: EspeakRequest, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    // The same Node binary that runs the server: it strips the child's types as it does ours.
    const child = spawn(process.execPath, [CHILD], { stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let settled = false;
    let killed = false;

    const finish = (err: unknown, wav?: Buffer) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (err === undefined && wav) resolve(wav);
      else reject(err);
    };
    const kill = (err: unknown) => {
      killed = true;
      child.kill('SIGKILL');
      const fallback = setTimeout(() => finish(err), 2000);
      child.once('close', () => {
        clearTimeout(fallback);
        finish(err);
      });
    };
    const onAbort = () => kill(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > WAV_MAX_BYTES) kill(new EspeakError('espeak-ng produced too much audio', 'failed', stderr));
      else stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    // A child that dies before reading its request makes the write fail with EPIPE: 'close' reports it.
    child.stdin.on('error', () => {});
    child.on('error', (err) => finish(new EspeakError(`espeak-ng could not be started: ${err.message}`, 'failed', stderr, err)));
    child.on('close', (code, bySignal) => {
      if (killed) return;
      if (code === 0) finish(undefined, Buffer.concat(stdout));
      else if (code === UNKNOWN_VOICE) finish(new EspeakError(`espeak-ng has no voice ${req.voice}`, 'unknown-voice', stderr));
      else {
        const how = bySignal ? `was killed by ${bySignal}` : `exited with code ${code}`;
        finish(new EspeakError(`espeak-ng ${how}: ${stderr.trim().split('\n').slice(-2).join(' | ')}`, 'failed', stderr));
      }
    });
    child.stdin.end(JSON.stringify(req));
  });
}
