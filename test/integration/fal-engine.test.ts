import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFalEngine } from '../../src/adapters/engines/fal/fal-engine.ts';
import { UpstreamError, type Engine, type UpstreamRequest } from '../../src/adapters/engines/engine-contract.ts';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { testVideo } from '../support/media-probe.ts';

/*
 * The fal adapter against the contract-held fake, without the service around it: how long it
 * waits for fal's queue, and which answers to a submit leave the job's existence unknown.
 */
const KEY = 'fal-engine-test-key';
let fal: FalFake;
let engine: Engine;

beforeAll(async () => {
  fal = await startFalFake({ key: KEY, video: await testVideo({ width: 64, height: 36, seconds: 1, audio: false }), pollsUntilDone: 1 });
  engine = createFalEngine({ queueUrl: fal.url, apiKey: KEY, allowPrivate: true });
});
afterAll(() => fal?.close());

const veo = (prompt: string): UpstreamRequest => ({
  generationId: crypto.randomUUID(),
  operation: 'ai-video',
  params: { model: 'veo-3.1', aspect_ratio: '16:9', duration: 4, resolution: '720p', generate_audio: false },
  inputs: { prompt, references: [], brandImages: [], productImages: [] },
});
const submit = (prompt: string, signal = AbortSignal.timeout(150_000)) => engine.submit(veo(prompt), { id: crypto.randomUUID() }, signal);
const jobsFor = (prompt: string) => fal.submits.filter((s) => s.input.prompt === prompt);
const failure = async (p: Promise<unknown>): Promise<UpstreamError> => {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(UpstreamError);
  return e as UpstreamError;
};

describe('fal: how long a call may take', () => {
  it("waits for a submit's answer past 30 s, as fal's own client does (120 s): its job is not left unconfirmed", async () => {
    fal.delaySubmitAnswers(31_000);
    try {
      const sub = await submit('a slow queue');
      expect(sub.providerJobId).toBe(jobsFor('a slow queue')[0]!.requestId);
    } finally {
      fal.delaySubmitAnswers(0);
    }
  }, 60_000);

  it('a submit cut by its limit (UPSTREAM_CALL_TIMEOUT_SECONDS) has an unknown outcome: fal queued the job all the same', async () => {
    const capped = createFalEngine({ queueUrl: fal.url, apiKey: KEY, allowPrivate: true, callTimeoutCapMs: 200 });
    fal.delaySubmitAnswers(1_000);
    try {
      const e = await failure(capped.submit(veo('cut short'), { id: crypto.randomUUID() }, AbortSignal.timeout(5_000)));
      expect(e.failure).toBe('unsent_unknown');
      expect(jobsFor('cut short')).toHaveLength(1);
    } finally {
      fal.delaySubmitAnswers(0);
    }
  });
});

describe("fal: errors to a submit, as fal's clients read them", () => {
  it('a 502, 503 or 504 from the front server (no request id) queued nothing: it may be sent again', async () => {
    for (const status of [502, 503, 504]) {
      fal.failNextSubmit({ status, body: { detail: 'Service unavailable' } });
      const e = await failure(submit(`front ${status}`));
      expect(e.failure).toBe('transient');
      expect(jobsFor(`front ${status}`)).toHaveLength(0);
    }
  });

  it("a 503 from fal's own server (its request id in x-fal-request-id) may come from a queued job: not sent again", async () => {
    fal.failNextSubmitQueued({ status: 503, error_type: 'runner_scheduling_failure', detail: 'No runner could be allocated' });
    const e = await failure(submit('server 503'));
    expect(e.failure).toBe('unsent_unknown');
    expect(jobsFor('server 503')).toHaveLength(1);
  });

  it('a 429 queued nothing (both of fal\'s clients resend it): it waits and may be sent again', async () => {
    fal.failNextSubmit({ status: 429, headers: { 'retry-after': '2' }, body: { detail: 'Too many requests' } });
    const e = await failure(submit('rate limited'));
    expect(e.failure).toBe('rate_limited');
    expect(e.retryAfterMs).toBe(2_000);
    expect(jobsFor('rate limited')).toHaveLength(0);
  });
});

describe("fal: the account's concurrency limit", () => {
  it('queues jobs past the limit instead of refusing them: the second waits IN_QUEUE until the first ends', async () => {
    const busy = await startFalFake({ key: KEY, video: await testVideo({ width: 64, height: 36, seconds: 1, audio: false }), pollsUntilDone: 1, queuedPolls: 0, concurrency: 1 });
    const onBusy = createFalEngine({ queueUrl: busy.url, apiKey: KEY, allowPrivate: true });
    const send = (prompt: string) => onBusy.submit(veo(prompt), { id: crypto.randomUUID() }, AbortSignal.timeout(10_000));
    const first = await send('first of two');
    const second = await send('second of two');
    const look = (s: typeof first) => onBusy.poll(s.handle, AbortSignal.timeout(10_000));
    expect(await look(second)).toMatchObject({ state: 'pending', detail: 'IN_QUEUE' });
    expect(await look(second)).toMatchObject({ state: 'pending', detail: 'IN_QUEUE' });
    expect(await look(first)).toMatchObject({ state: 'pending', detail: 'IN_PROGRESS' });
    expect(await look(first)).toMatchObject({ state: 'succeeded' });
    expect(await look(second)).toMatchObject({ state: 'pending', detail: 'IN_PROGRESS' });
    expect(await look(second)).toMatchObject({ state: 'succeeded' });
    expect(busy.submits).toHaveLength(2);
    await busy.close();
  });
});
