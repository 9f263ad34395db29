import { Readable } from 'node:stream';
import { withUploadLinks } from '../uploads.ts';
import { annotate } from '../../observability/tracing.ts';
import type { GenerationRow, UpstreamJobRow } from '../../db/types.ts';
import type { GenerationOperation } from '../../domain/generation-types.ts';
import type { EngineRegistry } from '../../adapters/engines/registry.ts';
import { UpstreamError, attachedImages, isUpstreamEngine, type Engine, type UpstreamInputs, type UpstreamOutput, type UpstreamStatus } from '../../adapters/engines/engine-contract.ts';
import type { SpeechEngine } from '../../adapters/engines/speech/engine.ts';
import { DownloadError, openDownload } from '../../adapters/net/download.ts';
import { queueJob } from '../../jobs/define.ts';
import { runGenerationJob } from '../../jobs/run-generation.ts';
import { findGenerationById } from '../../repositories/generations.ts';
import { countPoll, countRefetch, countRefusedRead, endUpstreamJob, findLiveUpstreamJob, findByProviderJob, findUpstreamJob, insertSubmitting, markSubmitted } from '../../repositories/upstream-jobs.ts';
import { AppError } from '../../domain/errors.ts';
import type { Deps } from '../deps.ts';
import type { GenerationLifecycle } from './lifecycle.ts';
import { storeResultStreams } from './results.ts';
import { recordEarlyHook, takeEarlyHook } from '../../repositories/early-hooks.ts';
import { createInputResolver } from './inputs.ts';
import { createScriptSpeech } from './script-speech.ts';
import { createEngineBreakers } from './engine-breakers.ts';
import { createInProcessSubmit, type Attempt } from './in-process.ts';
import { createKeptOutputs } from './kept-outputs.ts';
import { createPollScheduler, type PollLine } from './poll-budget.ts';
import { createBatchPolls } from './batch-poll.ts';
import { createCallbackTokens } from './provider-callbacks.ts';
import { COPYING, createProgressWriter } from './progress.ts';
import { queued } from '../../adapters/engines/progress.ts';
import type { EventBus } from '../../events/pg-events.ts';

// A result link that fails to download (expired, say) is asked of the provider again this often.
const MAX_RESULT_REFETCHES = 3;
// Reads of a job refused in a row before its generation fails (each after a growing wait).
const MAX_REFUSED_READS = 5;
// Removing what an ended job left on the provider's servers (a few deletes).
const RELEASE_TIMEOUT_MS = 30_000;
// One result's copy, every redirect and byte of it: 500 MB at 2 MB/s.
const RESULT_COPY_TIMEOUT_MS = 300_000;

/**
 * What bounds a whole submit or poll: the generation's deadline. Each call to the provider has its
 * own timeout, from its provider's documents (a Gemini image per call, a 2 GB Submagic upload, an
 * OpenAI image that takes minutes); a shorter bound here would cut them and turn slow answers into
 * unknown outcomes.
 */
const untilDeadline = (g: Pick<GenerationRow, 'deadline_at'>): AbortSignal => AbortSignal.timeout(Math.max(1_000, g.deadline_at.getTime() - Date.now()));

/**
 * The upstream job core: one attempt per generation recorded before anything is sent
 * (submitting), the provider's job id committed before any waiting (submitted), then polled by
 * re-scheduled jobs (no worker slot held while the provider works) until it ends. A worker that
 * dies after the submit resumes by polling; one that died during it never sends again unless the
 * provider deduplicates: the generation fails and is refunded instead of being paid twice.
 */
export function createUpstreamCore(
  deps: Pick<Deps, 'db' | 'storage' | 'config' | 'log' | 'metrics'> & { engines: EngineRegistry; lifecycle: GenerationLifecycle; speech: SpeechEngine; events?: EventBus },
) {
  const { db, storage, config, log, engines, lifecycle, speech, metrics, events } = deps;
  const called = (provider: string, call: 'submit' | 'poll', outcome: string) => metrics?.upstream.calls.inc({ provider, call, outcome });
  const toldOperator = new Set<string>();
  const script = createScriptSpeech({ db, storage, speech });
  const resolveInputs = createInputResolver({ db, storage, config, script });
  /**
   * The inputs of a generation, or undefined once it failed: an input it cannot have (the speech
   * of its script unconfirmed by a paid speech engine, an avatar gone) fails it and refunds it now,
   * rather than at its deadline after every retry of the job (which would ask again).
   */
  const inputsOf = async (g: GenerationRow, live?: UpstreamJobRow): Promise<UpstreamInputs | undefined> => {
    try {
      return await resolveInputs(g);
    } catch (e) {
      if (!(e instanceof UpstreamError) || (e.failure !== 'unsent_unknown' && e.failure !== 'refused')) throw e;
      if (live) await failBoth(g, live.id, e.message);
      else await lifecycle.fail(g.id, e.message);
      return undefined;
    }
  };
  const breakers = createEngineBreakers({ db, config, log });
  const progress = createProgressWriter({ db, log });
  const submitHere = createInProcessSubmit({ db, storage, config, log, lifecycle, events, progress });
  const keptOutputs = createKeptOutputs({ db, storage, log });

  const polls = createPollScheduler({ db, config });
  // The next look at a job: when it wants it; its provider's budget is kept when the look runs.
  const schedulePoll = (upstreamJobId: string, delayMs: number) => polls.schedule(upstreamJobId, delayMs);
  const callbacks = createCallbackTokens({ db, config });
  /**
   * Where the provider calls back for this attempt: `/hooks/<name>` for a provider that signs its
   * calls, a URL holding this attempt's own token for one that calls back unsigned (HeyGen).
   */
  const webhookUrlFor = (engine: Engine, operation: GenerationOperation, attemptId: string): Promise<string | undefined> =>
    engine.verifyHook ? Promise.resolve(callbacks.providerUrl(engine.name)) : engine.callsBack?.(operation) ? callbacks.attemptUrl(engine.name, attemptId) : Promise.resolve(undefined);
  // A job its provider will call back on is finished by the call: its polls are only a safety net.
  const hooked = (engine: Engine, operation: GenerationOperation) => Boolean(config.upstream.callbackBaseUrl && (engine.verifyHook || engine.callsBack?.(operation)));
  // A provider that lists its jobs: one look reads others with its own (batch-poll.ts).
  const batches = createBatchPolls({ db, log, polls, progress, hooked, finish: (g, job, engine, status) => finish(g, job, engine, status) });

  async function failBoth(g: Pick<GenerationRow, 'id'>, upstreamJobId: string, message: string, engine?: string): Promise<void> {
    await lifecycle.endUnfinished(g.id, message, { within: (trx) => endUpstreamJob(trx, upstreamJobId, { state: 'failed', error: message }), ...(engine ? { engine } : {}) });
  }

  function authFailed(provider: string): string {
    if (!toldOperator.has(provider)) {
      toldOperator.add(provider);
      log.error({ provider }, `${provider} refused the configured credentials: check its key`);
    }
    return `${provider} refused the service's credentials; an operator has been told`;
  }

  /** After a failed submit that provably created nothing: this attempt ends, the generation tries again later. */
  async function retrySubmitLater(g: GenerationRow, upstreamJobId: string, e: UpstreamError): Promise<void> {
    await endUpstreamJob(db, upstreamJobId, { state: 'failed', error: e.message });
    const delay = e.retryAfterMs ?? config.upstream.pollMs * 2;
    await queueJob(db, runGenerationJob, { generation_id: g.id }, { config, runAt: new Date(Date.now() + delay) });
  }

  /**
   * A result as a stream from the provider: a link streams from the socket (a provider's answer is
   * untrusted input: the SSRF rules and the size cap hold for its links too), nothing is held whole.
   */
  async function openResult(output: UpstreamOutput): Promise<Readable> {
    if ('bytes' in output) return Readable.from([output.bytes]);
    if ('file' in output) throw new UpstreamError('refused', 'a provider cannot answer with a file on this machine');
    if ('open' in output) return output.open(AbortSignal.timeout(RESULT_COPY_TIMEOUT_MS));
    return (await openDownload(output.url, { maxBytes: config.upstream.maxResultBytes, allowPrivate: config.allowPrivateNetworkUrls, timeoutMs: RESULT_COPY_TIMEOUT_MS })).body;
  }

  async function copyResults(g: GenerationRow, outputs: UpstreamOutput[], first = 0): Promise<{ keys: string[]; meta: Record<string, unknown>; bytes: number }> {
    const tooLarge = () => new UpstreamError('refused', 'the provider result is too large');
    try {
      return await storeResultStreams(storage, g, outputs.map((output) => () => openResult(output)), {
        maxBytes: config.upstream.maxResultBytes,
        tooLarge,
        first,
        // The bytes must be media of the kind the generation makes, whatever the provider says.
        refuse: (type) => (type?.mime.startsWith(`${g.kind}/`) ? undefined : new UpstreamError('refused', `the provider's result is not ${g.kind === 'video' ? 'a video' : 'an image'}`)),
      });
    } catch (e) {
      // Asking again would bring the same oversized file: the result will never do.
      if (e instanceof DownloadError && e.reason === 'too_large') throw tooLarge();
      throw e;
    }
  }

  /**
   * One submit of an attempt to one provider. `failover` when the provider refused before
   * accepting and the route has another provider to try; otherwise the attempt is settled here
   * (submitted, retried later, or failed and refunded).
   */
  async function submitTo(g: GenerationRow, engine: Engine, inputs: UpstreamInputs, existing: UpstreamJobRow | undefined, last: boolean): Promise<'settled' | 'failover'> {
    const attempt = existing ?? (await insertSubmitting(db, g.id, engine.name));
    // A provider fetches inputs by URL: an upload goes as a signed link to our copy.
    const params = await withUploadLinks({ db, storage }, g.team_id, g.params as Record<string, unknown>, 24 * 3600);
    let submission;
    try {
      const webhookUrl = await webhookUrlFor(engine, g.operation, attempt.id);
      const made = await keptOutputs.forAttempt(g, attempt.id, (output, position) => copyResults(g, [output], position));
      submission = await engine.submit(
        { generationId: g.id, operation: g.operation, params: keptOutputs.paramsFor(params, g, made.kept), inputs },
        { id: attempt.id, ...(webhookUrl ? { webhookUrl } : {}), ...(made.keep ? { keep: made.keep } : {}) },
        untilDeadline(g),
      );
    } catch (e) {
      const err = e instanceof UpstreamError ? e : new UpstreamError('unsent_unknown', 'the provider could not be asked', { cause: e });
      called(engine.name, 'submit', err.failure);
      log.warn({ err: e, generation_id: g.id, provider: engine.name, failure: err.failure }, 'upstream submit failed');
      if (err.failure !== 'refused' && err.failure !== 'in_progress') await breakers.failed(engine.name, err.message);
      // The provider may hold this attempt's job (its answer was lost) or still works on its first
      // send (in_progress): a provider that deduplicates is asked again later under the same key
      // for the original's answer. The attempt stays; a new one would carry a new key: a second job.
      if ((err.failure === 'in_progress' || err.failure === 'unsent_unknown') && engine.dedupesSubmit(g.operation)) {
        await queueJob(db, runGenerationJob, { generation_id: g.id }, { config, runAt: new Date(Date.now() + (err.retryAfterMs ?? config.upstream.pollMs * 2)) });
        return 'settled';
      }
      const message = err.failure === 'auth' ? authFailed(engine.name) : err.message;
      // Refused before accepting (nothing can exist upstream): the next provider of the route may take it.
      if (!last && (err.failure === 'auth' || err.failure === 'rate_limited' || err.failure === 'transient')) {
        await endUpstreamJob(db, attempt.id, { state: 'failed', error: `${message}; the next provider of the route was tried` });
        return 'failover';
      }
      if (err.failure === 'rate_limited' || err.failure === 'transient') await retrySubmitLater(g, attempt.id, err);
      else if (err.failure === 'auth' || err.failure === 'refused') await failBoth(g, attempt.id, message);
      // unsent_unknown (or in_progress from one that does not deduplicate): the job may exist upstream.
      else await failBoth(g, attempt.id, `${engine.name} did not confirm the job; it was not sent again so that it is never paid twice`);
      return 'settled';
    }
    called(engine.name, 'submit', 'ok');
    await breakers.accepted(engine.name);
    await markSubmitted(db, attempt.id, submission.providerJobId, submission.handle);
    await progress.set(g.id, { ...queued(), stage: `sent to ${engine.name}` }, { force: true });
    if (submission.done && submission.done.state !== 'pending') await finish(g, { id: attempt.id, refetches: 0, handle: submission.handle }, engine, submission.done);
    else {
      await polls.next(attempt.id, engine, polls.firstDelay(hooked(engine, g.operation)));
      // A callback that came before the job was recorded (kept by receiveHook) is looked at now. Taken
      // after the first look is queued: a callback recorded later finds the job submitted and its
      // look replaces that one, so neither order leaves the job to the safety-net poll.
      if (await takeEarlyHook(db, engine.name, [submission.providerJobId, attempt.id])) await polls.schedule(attempt.id, 0, 'hook');
    }
    return 'settled';
  }

  return {
    /**
     * The first half of a generation, run by run_generation: record, submit, schedule the first
     * poll. The route's engines are tried in order while one refuses before accepting (its key, a
     * rate limit, an answer that provably queued nothing), skipping those whose breaker is open; a
     * job a provider may hold is never sent elsewhere. An engine that renders in this process (the
     * local one, a route's last resort) answers its submit with the files: nothing is recorded or
     * polled, and the job queue retries it (`run`: its attempt, and the worker's shutdown).
     */
    async start(g: GenerationRow, chain: readonly Engine[], run: { attempt: Attempt; shutdown?: AbortSignal }): Promise<undefined> {
      const here = (engine: Engine) => submitHere(g, engine, () => resolveInputs(g, { speaksScript: true }), run.attempt, run.shutdown).then(() => undefined);
      // The local engine is only ever a route's last resort: a route that starts with it has no provider to record.
      if (chain[0] && !isUpstreamEngine(chain[0])) return here(chain[0]);
      let live = await findLiveUpstreamJob(db, g.id);
      if (live?.provider === script.provider) {
        // The worker stopped while the speech engine was asked for the script.
        const failed = await script.settleInterrupted(live);
        if (failed) {
          log.warn({ generation_id: g.id, upstream_job_id: live.id, provider: live.provider }, 'speech of the script was interrupted; not asked again');
          await failBoth(g, live.id, failed);
          return undefined;
        }
        live = undefined;
      }
      if (live) {
        const engine = engines.byName(live.provider);
        if (!engine || !isUpstreamEngine(engine)) {
          await failBoth(g, live.id, `${live.provider} is no longer configured; the job it may hold is not sent elsewhere`);
          return undefined;
        }
        if (live.state === 'submitted') {
          await schedulePoll(live.id, 0);
          return undefined;
        }
        if (!engine.dedupesSubmit(g.operation)) {
          log.warn({ generation_id: g.id, upstream_job_id: live.id, provider: engine.name }, 'upstream submit was interrupted; not sent again');
          await failBoth(g, live.id, `the submission to ${engine.name} was interrupted and cannot be confirmed; it was not sent again so that it is never paid twice`);
          return undefined;
        }
        // The provider deduplicates: the same attempt is sent again to it, never to another.
        const again = await inputsOf(g, live);
        if (again) await submitTo(g, engine, again, live, true);
        return undefined;
      }
      const inputs = await inputsOf(g);
      if (!inputs) return undefined;
      const params = g.params as Record<string, unknown>;
      const able = chain.filter((e) => !e.refuse(g.operation, params, attachedImages(inputs).length));
      const resting = await breakers.openAmong(able.filter(isUpstreamEngine).map((e) => e.name));
      const usable = able.filter((e) => !isUpstreamEngine(e) || !resting.has(e.name));
      if (usable.length === 0) {
        if (able.length === 0) {
          await lifecycle.fail(g.id, 'no provider of this route can make this request');
          return undefined;
        }
        // Every provider of the route is resting: ask again when the first breaker closes.
        const reopen = Math.min(...[...resting.values()].map((d) => d.getTime()));
        await queueJob(db, runGenerationJob, { generation_id: g.id }, { config, runAt: new Date(Math.max(reopen, Date.now() + config.upstream.pollMs)) });
        return undefined;
      }
      for (const [i, engine] of usable.entries()) {
        if (!isUpstreamEngine(engine)) return here(engine);
        if ((await submitTo(g, engine, inputs, undefined, i === usable.length - 1)) !== 'failover') return undefined;
      }
      return undefined;
    },

    /**
     * An inbound provider webhook: checked by the provider's scheme (or, for a provider that calls
     * back unsigned, by the attempt's token in its URL), then one poll right away, within the
     * provider's budget: the poll, not the webhook's body, decides (docs/providers.md says why).
     * A job already ended, unknown or named twice changes nothing.
     */
    async receiveHook(provider: string, headers: Record<string, string | string[] | undefined>, rawBody: Buffer, token?: string): Promise<'polling' | 'early' | 'ignored'> {
      const engine = engines.byName(provider);
      if (!engine || !isUpstreamEngine(engine)) throw new AppError('not_found', 'No such provider hook');
      if (token !== undefined) {
        if (!engine.callsBack) throw new AppError('not_found', 'No such provider hook');
        const attemptId = await callbacks.attemptOf(provider, token);
        if (!attemptId) throw new AppError('unauthorized', 'The callback token is not valid');
        return lookSoon(provider, attemptId, () => findUpstreamJob(db, attemptId));
      }
      if (!engine.verifyHook) throw new AppError('not_found', 'No such provider hook');
      const verified = await engine.verifyHook(headers, rawBody).catch((e: unknown) => {
        log.warn({ err: e, provider }, 'provider webhook keys could not be read');
        return null;
      });
      if (!verified) throw new AppError('unauthorized', 'The webhook signature is not valid');
      return lookSoon(provider, verified.providerJobId, () => findByProviderJob(db, provider, verified.providerJobId));
    },

    /**
     * One poll of a submitted attempt, run by poll_upstream; it schedules the next one itself.
     * `line`: where the look stands in its provider's budget (poll-budget.ts).
     */
    async poll(upstreamJobId: string, opts: { line?: PollLine } = {}): Promise<void> {
      const job = await findUpstreamJob(db, upstreamJobId);
      if (!job || job.state !== 'submitted') return;
      const engine = engines.byName(job.provider);
      annotate({ 'adforge.generation_id': job.generation_id });
      const g = await findGenerationById(db, job.generation_id);
      if (!g || g.status !== 'processing') {
        // Ended meanwhile (the sweeper's deadline): stop the provider's work where it can be stopped.
        await endUpstreamJob(db, job.id, { state: 'cancelled', error: 'the generation ended before the provider finished' });
        if (engine && isUpstreamEngine(engine)) {
          await engine.cancel?.(job.handle, AbortSignal.timeout(10_000)).catch(() => {});
          await release(engine, job.handle);
        }
        return;
      }
      if (!engine || !isUpstreamEngine(engine)) {
        await failBoth(g, job.id, `${job.provider} is no longer configured on this service`);
        return;
      }
      // The provider's budget is kept across jobs and worker processes: past it, the look waits for its slot.
      const line = opts.line ?? 'take';
      // A routine look that a batch read already due will cover waits for it; a webhook's look never does.
      if (line === 'take' && (await batches.ride(job, engine))) return;
      if (!(await polls.admit(job.id, engine, line))) return;
      let status;
      try {
        const batched = await batches.lead(job, engine, untilDeadline(g));
        if (batched === 'requeued') return;
        status = batched === 'alone' ? await engine.poll(job.handle, untilDeadline(g)) : batched;
      } catch (e) {
        const err = e instanceof UpstreamError ? e : new UpstreamError('transient', 'the provider could not be asked', { cause: e });
        called(engine.name, 'poll', err.failure);
        if (err.failure === 'auth') return failBoth(g, job.id, authFailed(engine.name));
        // A refused read (a 4xx, a redirect, an answer too large) is asked again: the job may be
        // made, and billed, whatever one read said. Only a run of them ends the generation.
        if (err.failure === 'refused') {
          if ((await countRefusedRead(db, job.id, `refused: ${err.message}`)) >= MAX_REFUSED_READS) return failBoth(g, job.id, err.message);
          return schedulePoll(job.id, polls.retryDelay(job.polls, job.created_at));
        }
        await countPoll(db, job.id, `${err.failure}: ${err.message}`);
        // A 429 holds back every read of this provider, not only this job's.
        if (err.failure === 'rate_limited') return schedulePoll(job.id, await polls.rateLimited(engine, err.retryAfterMs));
        return schedulePoll(job.id, err.retryAfterMs ?? polls.retryDelay(job.polls, job.created_at));
      }
      called(engine.name, 'poll', 'ok');
      if (status.state === 'pending') {
        await countPoll(db, job.id, status.detail ?? 'pending', { answered: true });
        if (status.progress) await progress.set(g.id, status.progress);
        return polls.next(job.id, engine, status.retryAfterMs ?? polls.pendingDelay(job.created_at, hooked(engine, g.operation)));
      }
      return finish(g, job, engine, status);
    },
  };

  /**
   * A callback is the provider saying the job moved: its job is looked at now, ahead of the routine
   * looks (its read still within the budget). One that comes before its submit's answer is
   * recorded (the provider called back as it answered) is kept first, for the submit to take; the
   * job is then read again, so that a submit recorded meanwhile is looked at all the same.
   */
  async function lookSoon(provider: string, jobRef: string, find: () => Promise<UpstreamJobRow | undefined>): Promise<'polling' | 'early' | 'ignored'> {
    const now = await find();
    if (now && now.state !== 'submitting' && now.state !== 'submitted') return 'ignored';
    if (now?.state !== 'submitted') await recordEarlyHook(db, provider, jobRef);
    const job = now?.state === 'submitted' ? now : await find();
    if (!job) return 'early';
    if (job.state === 'submitting') return 'early';
    if (job.state !== 'submitted') return 'ignored';
    await polls.schedule(job.id, 0, 'hook');
    return 'polling';
  }

  /** A final answer of the provider: the generation fails, or its results are copied and it completes. */
  async function finish(g: GenerationRow, job: { id: string; refetches: number; handle: Record<string, unknown> }, engine: Engine, status: Exclude<UpstreamStatus, { state: 'pending' }>): Promise<void> {
    await settle(g, job, engine, status);
    // Only an engine that leaves copies behind (ComfyUI) costs the read: every other finish stays one step.
    if (!engine.release) return;
    // Ended, whichever way (a refetch aside): what the job left on the operator's own servers goes.
    const row = await findUpstreamJob(db, job.id);
    if (row && row.state !== 'submitted' && row.state !== 'submitting') await release(engine, job.handle);
  }

  /** Best effort: a copy the engine could not remove is logged, never a failure of the generation. */
  async function release(engine: Engine, handle: Record<string, unknown>): Promise<void> {
    await engine.release?.(handle, AbortSignal.timeout(RELEASE_TIMEOUT_MS)).catch((e: unknown) => log.warn({ err: e, provider: engine.name }, 'what the job left at its provider could not be removed'));
  }

  async function settle(g: GenerationRow, job: { id: string; refetches: number }, engine: Engine, status: Exclude<UpstreamStatus, { state: 'pending' }>): Promise<void> {
    if (status.state === 'failed') return failBoth(g, job.id, status.message, engine.name);
    let copied;
    const kept = await keptOutputs.list(g);
    try {
      await progress.set(g.id, COPYING, { force: true });
      copied = await copyResults(g, status.outputs, kept.length);
    } catch (e) {
      if (e instanceof UpstreamError) return failBoth(g, job.id, e.message);
      // Provider links expire: ask the provider again for fresh ones, a few times.
      if (job.refetches >= MAX_RESULT_REFETCHES) return failBoth(g, job.id, `the ${engine.name} result could not be downloaded`);
      await countRefetch(db, job.id, e instanceof DownloadError ? e.message : 'download failed');
      return schedulePoll(job.id, 0);
    }
    const cost = status.cost ?? null;
    await lifecycle.complete(g.id, copied.keys, copied.meta, { within: (trx) => endUpstreamJob(trx, job.id, { state: 'succeeded', cost }), engine: engine.name, outputBytes: copied.bytes, kept });
  }
}
export type UpstreamCore = ReturnType<typeof createUpstreamCore>;

