import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stdoutJson } from '../support/cli-run.ts';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { startGeminiFake } from '../support/gemini-fake.ts';
import { pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

/*
 * `veo-3.1=fal|gemini`: fal first, Gemini when fal refuses before accepting. Breakers open after
 * two consecutive submit failures and rest eight seconds (the CLI that reads them takes a while to start).
 */
let fal: FalFake;
let gemini: Awaited<ReturnType<typeof startGeminiFake>>;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;
let env: Record<string, string>;

beforeAll(async () => {
  const video = await testVideo({ width: 160, height: 90, seconds: 1 });
  fal = await startFalFake({ key: 'fal-fo', video, pollsUntilDone: 1 });
  gemini = await startGeminiFake({ key: 'gem-fo', video, png: await pngBytes(8, 8, '#000000'), pollsUntilDone: 1 });
  env = {
    FAL_KEY: 'fal-fo',
    FAL_QUEUE_URL: fal.url,
    GEMINI_API_KEY: 'gem-fo',
    GEMINI_API_URL: gemini.url,
    ENGINE_ROUTES: 'veo-3.1=fal|gemini,*=local',
    ENGINE_BREAKER_FAILURES: '2',
    // Long enough that a loaded machine still reads the breaker open after two generations.
    ENGINE_BREAKER_COOLDOWN_SECONDS: '25',
    UPSTREAM_POLL_MS: '40',
  };
  // Veo is what two providers of ours both make, and Gemini retired it on 2026-10-22: the start
  // would refuse this route, so the fail-over mechanism is held here with it allowed (and
  // `adforge engines`, an admin command, reads it anyway).
  svc = await startTestService(env, { worker: true, allowRetired: true });
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await fal?.close();
  await gemini?.close();
});

const create = (prompt: string) => svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { model: 'veo-3.1', prompt, aspect_ratio: '16:9', duration: 4, resolution: '720p' } });
const attempts = (id: string) => svc.app.db.selectFrom('upstream_jobs').select(['provider', 'state', 'error']).where('generation_id', '=', id).orderBy('created_at').execute();
const toGemini = (prompt: string) => gemini.videoSubmits.filter((s) => s.body.instances?.[0]?.prompt === prompt);
const toFal = (prompt: string) => fal.submits.filter((s) => s.input.prompt === prompt);
const engines = async () => stdoutJson(await runCli(['engines', '--json'], { ...env, DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.dataDir }));
const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;

describe('fail-over routes', () => {
  it('a 503 at fal (nothing queued) moves the generation to Gemini, which makes it', async () => {
    fal.failNextSubmit({ status: 503, body: { detail: 'Service unavailable' } });
    const res = await create('fails over');
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status, g.error).toBe('completed');
    expect(toFal('fails over')).toHaveLength(0);
    expect(toGemini('fails over')).toHaveLength(1);
    expect(await attempts(res.body.generation_id)).toEqual([
      { provider: 'fal', state: 'failed', error: 'fal answered 503; the next provider of the route was tried' },
      { provider: 'gemini', state: 'succeeded', error: null },
    ]);
  });

  it('never after acceptance: a job fal accepted and then refused fails and is refunded; Gemini never sees it', async () => {
    const before = await used();
    const res = await create('forbidden after acceptance');
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(toFal('forbidden after acceptance')).toHaveLength(1);
    expect(toGemini('forbidden after acceptance')).toHaveLength(0);
    expect(await used()).toBe(before);
  });

  it('a 500 at fal (the job may exist) is not sent to Gemini: failed and refunded rather than paid twice', async () => {
    fal.failNextSubmit({ status: 500, body: { detail: 'Internal error' } });
    const res = await create('unknown outcome');
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('fal did not confirm the job; it was not sent again so that it is never paid twice');
    expect(toGemini('unknown outcome')).toHaveLength(0);
  });
});

describe("fal's circuit breaker", () => {
  it('opens after two consecutive submit failures (fal is then skipped), shows in `adforge engines`, and closes after its rest on an accepted job', async () => {
    // The 500 above was the first failure in a row; one more 503 opens it.
    fal.failNextSubmit({ status: 503 });
    const second = await create('second failure');
    expect((await waitForGeneration(svc, t.key, second.body.generation_id)).status).toBe('completed');
    expect(toGemini('second failure')).toHaveLength(1);

    const open = await engines();
    expect(open.routes).toContainEqual({ key: 'veo-3.1', engines: ['fal', 'gemini'] });
    expect(open.providers.find((p: { name: string }) => p.name === 'fal')).toMatchObject({ breaker: 'open', consecutive_failures: 2, last_error: 'fal answered 503', in_flight: 0 });
    expect(open.providers.find((p: { name: string }) => p.name === 'gemini')).toMatchObject({ breaker: 'closed', consecutive_failures: 0 });
    expect(open.breaker).toEqual({ failures: 2, cooldown_seconds: 25 });
    const reopens = new Date(open.providers.find((p: { name: string }) => p.name === 'fal').open_until).getTime();
    // The same seen by Prometheus: the breaker as a gauge, every call to a provider by its outcome.
    const metrics = await svc.app.metrics.registry.metrics();
    expect(metrics).toContain('adforge_upstream_breaker_open{provider="fal"} 1');
    expect(metrics).toMatch(/adforge_upstream_calls_total\{provider="fal",call="submit",outcome="transient"\} [2-9]/);
    expect(metrics).toMatch(/adforge_upstream_calls_total\{provider="gemini",call="submit",outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(/adforge_upstream_calls_total\{provider="gemini",call="poll",outcome="ok"\} [1-9]/);

    const skipped = await create('while open');
    expect((await waitForGeneration(svc, t.key, skipped.body.generation_id)).status).toBe('completed');
    expect(toFal('while open')).toHaveLength(0);
    expect(fal.refusedSubmits.length).toBe(3);
    expect((await attempts(skipped.body.generation_id)).map((a) => a.provider)).toEqual(['gemini']);

    await new Promise((r) => setTimeout(r, Math.max(0, reopens - Date.now()) + 100));
    expect((await engines()).providers.find((p: { name: string }) => p.name === 'fal').breaker).toBe('half-open');
    const after = await create('after the rest');
    expect((await waitForGeneration(svc, t.key, after.body.generation_id)).status).toBe('completed');
    expect(toFal('after the rest')).toHaveLength(1);
    expect((await engines()).providers.find((p: { name: string }) => p.name === 'fal')).toMatchObject({ breaker: 'closed', consecutive_failures: 0, open_until: null });
  }, 90_000);

  it('a provider at the end of its route whose breaker is open is waited for, not failed', async () => {
    // Two 503s in a row on a fal-only route (through the operation key) open its breaker; the generation waits for the rest.
    const only = await startTestService({ ...env, ENGINE_ROUTES: 'ai-video=fal,*=local', ENGINE_BREAKER_COOLDOWN_SECONDS: '1' }, { worker: true });
    try {
      const team = await only.team({ credits: 10_000 });
      fal.failNextSubmit({ status: 503 });
      fal.failNextSubmit({ status: 503 });
      const res = await only.api('POST', '/api/v1/videos/ai-video', { key: team.key, body: { model: 'veo-3.1', prompt: 'waits for fal', aspect_ratio: '16:9', duration: 4 } });
      const g = await waitForGeneration(only, team.key, res.body.generation_id, 30_000);
      expect(g.status).toBe('completed');
      expect(toFal('waits for fal')).toHaveLength(1);
    } finally {
      await only.close();
    }
  });
});
