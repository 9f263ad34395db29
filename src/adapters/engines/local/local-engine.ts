import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError, type EngineJob, type EngineResult } from '../render-job.ts';
import { FfmpegError } from '../ffmpeg.ts';
import type { RenderContext, Speak } from './render-context.ts';
import { renderImages } from './images.ts';
import { localJob } from './job.ts';
import { UpstreamError, type Engine, type UpstreamRequest } from '../engine-contract.ts';
import { renderVideo } from './videos.ts';

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

/** The local engine: the one engine contract, and `run` for a job whose inputs are read already (its renderers' tests). */
export type LocalEngine = Engine & { readonly kind: 'local'; run(job: EngineJob, signal: AbortSignal): Promise<EngineResult> };

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
    /** Renders at once, reading the inputs through read(): the answer is "done" with the files. */
    async submit(request: UpstreamRequest, _attempt: { id: string }, signal: AbortSignal) {
      const { files } = await engine.run(await localJob(request, signal), signal);
      return { providerJobId: request.generationId, handle: {}, done: { state: 'succeeded' as const, outputs: files.map((f) => ({ bytes: f.bytes, type: { mime: f.mime, ext: f.ext } })) } };
    },
    poll(): Promise<never> {
      return Promise.reject(new UpstreamError('refused', 'the local engine answers its submit with the files; it has nothing to poll'));
    },
    async run(job: EngineJob, signal: AbortSignal): Promise<EngineResult> {
      signal.throwIfAborted();
      if (delayMs > 0) {
        // timers/promises rejects with its own AbortError; the signal's reason is what callers check.
        await sleep(delayMs, undefined, { signal }).catch((err: unknown) => {
          throw signal.aborted ? signal.reason : err;
        });
      }
      failOnPurpose(job);
      const ctx: RenderContext = { signal, tmpRoot: opts.tmpRoot, timeoutMs: opts.ffmpegTimeoutMs, speak: opts.speak };
      try {
        const files = job.kind === 'image' ? await renderImages(job, ctx) : [await renderVideo(job, ctx)];
        return { files };
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        throw toEngineError(err, job);
      }
    },
  };
  return engine;
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
