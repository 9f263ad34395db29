import { describe, expect, it } from 'vitest';
import { fractionOf, queued, running, stage, step } from '../../src/adapters/engines/progress.ts';
import type { EngineProgress } from '../../src/adapters/engines/engine-contract.ts';
import { createReportThrottle, storedProgress } from '../../src/services/generations/progress.ts';
import { createLocalEngine } from '../../src/adapters/engines/local/local-engine.ts';

describe('progress stages in words', () => {
  it('names the queue position from 1 (fal counts the next job as 0)', () => {
    expect(queued(0)).toEqual({ stage: 'queued at position 1', fraction: 0 });
    expect(queued(4)).toEqual({ stage: 'queued at position 5', fraction: 0 });
    expect(queued(undefined)).toEqual({ stage: 'queued', fraction: 0 });
    expect(queued(-1).stage).toBe('queued');
    expect(queued(1.5).stage).toBe('queued');
  });

  it('counts steps and clamps them to the whole', () => {
    expect(step(12, 30)).toEqual({ stage: 'running step 12 of 30', fraction: 0.4 });
    expect(step(40, 30)).toEqual({ stage: 'running step 30 of 30', fraction: 1 });
    expect(step(2, 4, 'rendered image')).toEqual({ stage: 'rendered image 2 of 4', fraction: 0.5 });
  });

  it("keeps an engine's own words on one short line", () => {
    expect(running()).toEqual({ stage: 'running' });
    expect(running('  Loading\n model   weights ')).toEqual({ stage: 'running: Loading model weights' });
    expect(running('x'.repeat(500)).stage).toHaveLength('running: '.length + 160);
    expect(running(undefined, 0.25)).toEqual({ stage: 'running', fraction: 0.25 });
    expect(stage('copying the result', 1.7)).toEqual({ stage: 'copying the result', fraction: 1 });
  });

  it('reads fractions only from finite numbers', () => {
    expect(fractionOf(45, 100)).toBe(0.45);
    expect(fractionOf(140, 100)).toBe(1);
    expect(fractionOf(-3, 100)).toBe(0);
    expect(fractionOf('45', 100)).toBeUndefined();
    expect(fractionOf(Number.NaN)).toBeUndefined();
    expect(fractionOf(5, 0)).toBeUndefined();
  });

  it('stores a clamped, rounded fraction (null when none) and a one-line stage', () => {
    expect(storedProgress({ stage: 'queued', fraction: 0 })).toEqual({ progress: 0, stage: 'queued' });
    expect(storedProgress({ stage: 'a\n\tb' })).toEqual({ progress: null, stage: 'a b' });
    expect(storedProgress({ stage: ' ', fraction: 2 })).toEqual({ progress: 1, stage: 'running' });
    expect(storedProgress({ stage: 'x', fraction: 1 / 3 }).progress).toBe(0.3333);
    expect(storedProgress({ stage: 'y'.repeat(300) }).stage).toHaveLength(200);
  });
});

describe('the report throttle', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('turns a flood of reports into one write per gap, the latest winning, with a trailing write', async () => {
    const writes: Array<{ at: number; p: EngineProgress }> = [];
    const throttle = createReportThrottle(100, async (_id, p) => {
      writes.push({ at: Date.now(), p });
    });
    const started = Date.now();
    // 1000 reports a second for half a second.
    for (let k = 1; k <= 500; k++) {
      throttle.report('g1', step(k, 500));
      if (k % 10 === 0) await sleep(10);
    }
    await sleep(150);
    await throttle.idle('g1');
    const elapsed = Date.now() - started;
    expect(writes.length).toBeGreaterThanOrEqual(3);
    expect(writes.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 1);
    for (let i = 1; i < writes.length; i++) expect(writes[i]!.at - writes[i - 1]!.at).toBeGreaterThanOrEqual(95);
    // The first report is written at once, the last one is never lost.
    expect(writes[0]!.p.stage).toBe('running step 1 of 500');
    expect(writes.at(-1)!.p).toEqual({ stage: 'running step 500 of 500', fraction: 1 });
  });

  it('keeps generations apart, and drops what is pending once a generation settles', async () => {
    const writes: string[] = [];
    const throttle = createReportThrottle(100, async (id, p) => {
      writes.push(`${id}:${p.stage}`);
    });
    throttle.report('a', stage('one'));
    throttle.report('b', stage('one'));
    throttle.report('a', stage('two'));
    await throttle.settle('a');
    await sleep(150);
    await throttle.idle('b');
    expect(writes).toEqual(['a:one', 'b:one']);
  });

  it('never runs two writes of one generation at once, and a failed write does not stop the next', async () => {
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const throttle = createReportThrottle(10, async () => {
      calls++;
      inFlight++;
      most = Math.max(most, inFlight);
      await sleep(40);
      inFlight--;
      if (calls === 1) throw new Error('database away');
    });
    for (let k = 0; k < 5; k++) {
      throttle.report('g', step(k, 5));
      await sleep(15);
    }
    await sleep(30);
    await throttle.idle('g');
    expect(most).toBe(1);
    expect(calls).toBeGreaterThanOrEqual(3);
  });
});

describe("the local engine's steps", () => {
  it('reports its held time, then each image rendered, with fractions that only grow', async () => {
    const engine = createLocalEngine({ delayMs: 350 });
    const seen: EngineProgress[] = [];
    const job = { generationId: 'g', operation: 'text-to-image', kind: 'image', params: {}, width: 64, height: 64, quantity: 3, prompt: 'a red sneaker', referenceImages: [], productImages: [] } as const;
    const { files } = await engine.run({ ...job, referenceImages: [], productImages: [] }, AbortSignal.timeout(20_000), (p) => seen.push(p));
    expect(files).toHaveLength(3);
    const stages = seen.map((p) => p.stage);
    expect(stages[0]).toBe('held before the render (LOCAL_ENGINE_DELAY_MS)');
    expect(stages.filter((s) => s.startsWith('held')).length).toBeGreaterThanOrEqual(3);
    expect(stages.slice(-3)).toEqual(['rendered image 1 of 3', 'rendered image 2 of 3', 'rendered image 3 of 3']);
    const fractions = seen.map((p) => p.fraction!);
    for (let i = 1; i < fractions.length; i++) expect(fractions[i]).toBeGreaterThanOrEqual(fractions[i - 1]!);
    expect(fractions.at(-1)).toBeCloseTo(0.9);
  });

  it('reports drawing, then encoding, for a video', async () => {
    const engine = createLocalEngine();
    const seen: EngineProgress[] = [];
    const job = { generationId: 'g', operation: 'ai-video', kind: 'video', params: {}, width: 64, height: 36, durationSeconds: 1, quantity: 1, prompt: 'a slow zoom' } as const;
    await engine.run({ ...job, referenceImages: [], productImages: [] }, AbortSignal.timeout(60_000), (p) => seen.push(p));
    expect(seen).toEqual([
      { stage: 'drawing the video', fraction: 0 },
      { stage: 'encoding the video', fraction: 0.45 },
    ]);
  });
});
