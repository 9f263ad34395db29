import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { EngineError } from '../../adapters/engines/render-job.ts';
import { inSpan } from '../../observability/tracing.ts';
import { UpstreamError, type Engine, type UpstreamInputs } from '../../adapters/engines/engine-contract.ts';
import { DownloadError } from '../../adapters/net/download.ts';
import { findGenerationById } from '../../repositories/generations.ts';
import type { GenerationRow } from '../../db/types.ts';
import type { Deps } from '../deps.ts';
import type { GenerationLifecycle } from './lifecycle.ts';
import { storeResults, type ResultFile } from './results.ts';
import { subscribeGenerationEvents } from '../../events/generation-events.ts';
import type { EventBus } from '../../events/pg-events.ts';
import { COPYING, type ProgressWriter } from './progress.ts';
import { createKeptOutputs } from './kept-outputs.ts';

export interface Attempt {
  number: number;
  max: number;
}

/** Thrown to ask the job queue for another attempt later (with its backoff). */
export class RetryLater extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryLater';
  }
}

/**
 * A submit to an engine that makes the files in this process (the local renderer): it answers
 * "done" with them, so there is no provider job to record or poll. It holds the worker slot while
 * it renders and is stopped when the generation ends elsewhere (a cancel, the sweeper's deadline)
 * or the worker shuts down; a transient failure is retried by the job queue, up to its attempts.
 */
export function createInProcessSubmit(
  deps: Pick<Deps, 'db' | 'storage' | 'config' | 'log'> & { lifecycle: GenerationLifecycle; events?: EventBus | undefined; progress: ProgressWriter },
) {
  const { db, storage, config, log, lifecycle, events, progress } = deps;
  const keptOutputs = createKeptOutputs({ db, storage, log });

  /**
   * Aborts `stop` when the generation ends while it renders, heard on the event bus from whichever
   * node ended it. Answers the function that stops watching.
   */
  async function watchEnd(g: { id: string; team_id: string }, stop: AbortController): Promise<() => Promise<void>> {
    if (!events) return async () => {};
    const changes = subscribeGenerationEvents(events, { teamId: g.team_id, generationId: g.id });
    await changes.ready;
    void (async () => {
      for await (const change of changes) {
        if (change.status === 'processing') continue;
        stop.abort(new Error('the generation ended while it rendered'));
        break;
      }
    })();
    // An end committed before the watch listened is read instead.
    const now = await findGenerationById(db, g.id);
    if (now && now.status !== 'processing') stop.abort(new Error('the generation ended before it rendered'));
    return async () => {
      await changes.return();
    };
  }

  /** `shutdown` aborts when the worker stops: the render is dropped and the job goes back to the queue. */
  return async function submitHere(g: GenerationRow, engine: Engine, inputs: () => Promise<UpstreamInputs>, attempt: Attempt, shutdown?: AbortSignal): Promise<void> {
    const lastAttempt = attempt.number >= attempt.max;
    // Outputs a provider made before this route fell back here: only the rest is rendered.
    const kept = await keptOutputs.list(g);
    let files: ResultFile[];
    let tempDir: string | undefined;
    const ended = new AbortController();
    const unwatch = await watchEnd(g, ended);
    try {
      const request = { generationId: g.id, operation: g.operation, params: keptOutputs.paramsFor(g.params as Record<string, unknown>, g, kept), inputs: await inputs() };
      const signals = [AbortSignal.timeout(config.engineAttemptTimeoutSeconds * 1000), ended.signal];
      if (shutdown) signals.push(shutdown);
      const submission = await inSpan('engine.run', { 'adforge.engine': engine.name, 'adforge.generation_id': g.id, 'adforge.operation': g.operation }, () =>
        engine.submit(request, { id: g.id, onProgress: (p) => progress.report(g.id, p) }, AbortSignal.any(signals)),
      );
      tempDir = submission.tempDir;
      files = filesOf(submission.done);
    } catch (e) {
      await removeDir(tempDir);
      if (shutdown?.aborted && !ended.signal.aborted) {
        log.info({ generation_id: g.id }, 'render stopped: the worker is shutting down; the job goes back to the queue');
        throw new RetryLater('the worker shut down during the render', { cause: e });
      }
      // Ended elsewhere (cancelled): its render is stopped and there is nothing left to record.
      if (ended.signal.aborted) {
        log.info({ generation_id: g.id }, 'render stopped: the generation ended');
        return;
      }
      const verdict = classify(e);
      log.warn({ err: e, generation_id: g.id, attempt: attempt.number, transient: verdict.transient }, 'generation attempt failed');
      if (verdict.transient && !lastAttempt) throw new RetryLater(verdict.message, { cause: e });
      await lifecycle.fail(g.id, verdict.message, { engine: engine.name });
      return;
    } finally {
      // The engine's reports end with its submit: none may land after the core's own stage or the end.
      await progress.settle(g.id);
      await unwatch();
    }

    try {
      await progress.set(g.id, COPYING, { force: true });
      const limits = { maxBytes: config.upstream.maxResultBytes, tooLarge: () => new Error(`a rendered file is larger than UPSTREAM_MAX_RESULT_MB`), first: kept.length };
      const { keys, meta, bytes } = await inSpan('storage.put', { 'adforge.generation_id': g.id, 'adforge.files': files.length }, () => storeResults(storage, g, files, limits));
      await lifecycle.complete(g.id, keys, meta, { engine: engine.name, outputBytes: bytes, kept });
    } finally {
      await removeDir(tempDir);
    }
  };
}

/** The engine's files are gone once stored or given up on: a render's temp dir never outlives its attempt. */
async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
}

/** The files of an in-process engine's answer: it answers "done" with files it wrote, and their types. */
function filesOf(done: Awaited<ReturnType<Engine['submit']>>['done']): ResultFile[] {
  if (done?.state === 'failed') throw new EngineError(done.message, { transient: false });
  if (done?.state !== 'succeeded') throw new EngineError('the engine did not answer with its files', { transient: true });
  return done.outputs.map((o) => {
    if (!('file' in o)) throw new EngineError('the engine did not answer with its files', { transient: true });
    const path = o.file;
    return { ...o.type, path, open: () => createReadStream(path) };
  });
}

/** What the user sees as `error`, and whether another attempt could help. */
function classify(e: unknown): { message: string; transient: boolean } {
  if (e instanceof EngineError) return { message: e.message, transient: e.transient };
  // The input resolver speaks to providers; to an in-process engine a fetch that failed stays one, anything else is ours.
  if (e instanceof UpstreamError) return classify(e.cause ?? new Error(e.message));
  if (e instanceof DownloadError) {
    return { message: `an input could not be fetched: ${e.message}`, transient: e.reason === 'timeout' || e.reason === 'network' };
  }
  if (e instanceof Error && e.name === 'TimeoutError') return { message: 'the engine took too long', transient: true };
  return { message: 'internal error while generating', transient: true };
}
