import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError, type EngineJob, type EngineResult } from '../render-job.ts';
import { FfmpegError } from '../ffmpeg.ts';
import type { RenderContext, Speak } from './render-context.ts';
import { renderImages } from './images.ts';
import { localJob } from './job.ts';
import { UpstreamError, type Engine, type EngineProgress, type UpstreamRequest } from '../engine-contract.ts';
import { stage } from '../progress.ts';
import { renderVideo } from './videos.ts';
import { TEMP_PREFIX } from './temp.ts';

export interface LocalEngineOptions {
  /** Extra wait before a result is returned, so clients see `processing` (LOCAL_ENGINE_DELAY_MS). */
  delayMs?: number;
  /** Parent of the per-job temp dirs; default os.tmpdir(). */
  tmpRoot?: string;
  /** Longest one ffmpeg run may take; default 10 minutes. */
  ffmpegTimeoutMs?: number;
  /** How a talking avatar's script is spoken (speech/tts.ts's synthesize); without it only voiceovers are spoken. */
  speak?: Speak;
}

/**
 * The local engine: the one engine contract, and `run` for a job made already (its renderers'
 * tests). Both answer files on disk, in a temp dir whoever gets them removes.
 */
export type LocalEngine = Engine & { readonly kind: 'local'; run(job: EngineJob, signal: AbortSignal, progress?: (p: EngineProgress) => void): Promise<EngineResult> };

// Of the whole job: the held time (LOCAL_ENGINE_DELAY_MS) takes the first half when there is one;
// the render runs up to RENDERED, the rest is the core's (storing the files).
const HELD = 0.5;
const RENDERED = 0.9;
const HOLD_TICK_MS = 100;

/**
 * The built-in engine: renders real images (sharp) and videos (ffmpeg) on this machine, with no
 * network. Test hooks: `[[fail]]` in the prompt or script fails for good, `[[flaky]]` fails as
 * transient (worth a retry). An abort rejects with the signal's reason, as AbortSignal APIs do.
 */
export function createLocalEngine(opts: LocalEngineOptions = {}): LocalEngine {
  const delayMs = Math.max(0, opts.delayMs ?? 0);
  const engine: LocalEngine = {
    name: 'local',
    kind: 'local',
    // Rendering again makes the same files and costs nothing outside this machine.
    dedupesSubmit: () => true,
    refuse: () => undefined,
    /**
     * Renders at once, reading images through read() and streaming videos and sound to disk: the
     * answer is "done" with the files, in the submission's `tempDir` for the core to store and remove.
     */
    async submit(request: UpstreamRequest, attempt: { id: string; onProgress?: (p: EngineProgress) => void }, signal: AbortSignal) {
      attempt.onProgress?.(stage('reading the inputs', 0));
      const { files, dir } = await engine.run(await localJob(request, signal), signal, attempt.onProgress);
      const outputs = files.map((f) => ({ file: f.path, type: { mime: f.mime, ext: f.ext } }));
      return { providerJobId: request.generationId, handle: {}, tempDir: dir, done: { state: 'succeeded' as const, outputs } };
    },
    poll(): Promise<never> {
      return Promise.reject(new UpstreamError('refused', 'the local engine answers its submit with the files; it has nothing to poll'));
    },
    async run(job: EngineJob, signal: AbortSignal, progress?: (p: EngineProgress) => void): Promise<EngineResult> {
      signal.throwIfAborted();
      if (delayMs > 0) await hold(delayMs, signal, progress);
      failOnPurpose(job);
      const base = delayMs > 0 ? HELD : 0;
      // The renderer's own fractions, placed in the render's share of the whole.
      const scaled = progress && ((p: EngineProgress) => progress({ stage: p.stage, fraction: base + (RENDERED - base) * (p.fraction ?? 0) }));
      const ctx: RenderContext = { signal, timeoutMs: opts.ffmpegTimeoutMs, speak: opts.speak, progress: scaled };
      progress?.(stage(job.kind === 'image' ? 'rendering' : 'drawing the video', base));
      const dir = await fs.mkdtemp(path.join(opts.tmpRoot ?? os.tmpdir(), TEMP_PREFIX));
      try {
        const files = job.kind === 'image' ? await renderImages(job, dir, ctx) : [await renderVideo(job, dir, ctx)];
        return { files, dir };
      } catch (err) {
        await fs.rm(dir, { recursive: true, force: true });
        if (signal.aborted) throw signal.reason;
        throw toEngineError(err, job);
      }
    },
  };
  return engine;
}

/** The configured wait before the render, reported as it passes so that a client sees the job move. */
async function hold(delayMs: number, signal: AbortSignal, progress?: (p: EngineProgress) => void): Promise<void> {
  const started = Date.now();
  for (;;) {
    const elapsed = Date.now() - started;
    if (elapsed >= delayMs) return;
    progress?.(stage('held before the render (LOCAL_ENGINE_DELAY_MS)', (HELD * elapsed) / delayMs));
    // timers/promises rejects with its own AbortError; the signal's reason is what callers check.
    await sleep(Math.min(HOLD_TICK_MS, delayMs - elapsed), undefined, { signal }).catch((err: unknown) => {
      throw signal.aborted ? signal.reason : err;
    });
  }
}

function failOnPurpose(job: EngineJob): void {
  const text = `${job.prompt} ${job.script ?? ''}`;
  if (text.includes('[[fail]]')) {
    throw new EngineError('the local engine was asked to fail ([[fail]] in the prompt)', { transient: false });
  }
  if (text.includes('[[flaky]]')) {
    throw new EngineError('the local engine failed for a moment ([[flaky]] in the prompt)', { transient: true });
  }
}

/** Messages become the generation's `error`: short, no paths, no tool output (kept as `cause`). */
function toEngineError(err: unknown, job: EngineJob): EngineError {
  if (err instanceof EngineError) return err;
  if (err instanceof FfmpegError && err.reason === 'timeout') {
    return new EngineError('rendering the video took too long', { transient: true, cause: err });
  }
  const what = job.kind === 'image' ? 'the image' : 'the video';
  return new EngineError(`the local engine could not render ${what}`, { transient: false, cause: err });
}
