import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import { spawnWorker, startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { waitUntil, type LongRunning } from '../support/cli-run.ts';

// Real `adforge worker` processes killed with SIGKILL while fal holds their job.
const FAL_KEY = 'fal-kill-test-key';
let fal: FalFake;
let svc: TestService;
const children: LongRunning[] = [];

beforeAll(async () => {
  fal = await startFalFake({ key: FAL_KEY, video: await testVideo({ width: 160, height: 90, seconds: 1, audio: false }), pollsUntilDone: 1 });
  svc = await startTestService({ FAL_KEY, FAL_QUEUE_URL: fal.url, ENGINE_ROUTES: 'veo-3.1=fal,*=local' });
});
// Each test's workers end with it: a worker left from the previous test could take the next one's job.
const stopWorkers = async () => {
  for (const c of children) if (c.running()) c.child.kill('SIGKILL');
  await Promise.all(children.splice(0).map((c) => c.waitForExit(5_000)));
};
afterEach(stopWorkers);
afterAll(async () => {
  await stopWorkers();
  await svc?.close();
  await fal?.close();
});

function worker() {
  const c = spawnWorker(svc, {
    FAL_KEY,
    FAL_QUEUE_URL: fal.url,
    ENGINE_ROUTES: 'veo-3.1=fal,*=local',
    UPSTREAM_POLL_MS: '100',
  });
  children.push(c);
  return c;
}

const used = async (teamId: string) => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow()).credits_used;
const create = (key: string, prompt: string) =>
  svc.api('POST', '/api/v1/videos/ai-video', { key, body: { model: 'veo-3.1', prompt, aspect_ratio: '16:9', duration: 4 } });

describe('a worker SIGKILLed while its generation is upstream', () => {
  it('after the submit: another worker polls it to the end; fal counted exactly one submit; charged once', async () => {
    const t = await svc.team({ credits: 1000 });
    fal.holdCompletion(true);
    const first = worker();
    const res = await create(t.key, 'killed after submit');
    const id = res.body.generation_id as string;
    const mine = () => fal.submits.filter((s) => s.input.prompt === 'killed after submit');
    await waitUntil(async () => mine().length === 1 && fal.requests.get(mine()[0]!.requestId)!.polls > 0, 30_000, 'the first worker to submit and poll');
    first.child.kill('SIGKILL');
    await first.exited;
    const charged = await used(t.teamId);

    worker();
    fal.holdCompletion(false);
    const done = await waitForGeneration(svc, t.key, id, 60_000);
    expect(done.status).toBe('completed');
    expect(mine()).toHaveLength(1);
    expect(await used(t.teamId)).toBe(charged);
    expect((await svc.fetchUrl(done.result_url)).bytes.length).toBeGreaterThan(0);
  }, 120_000);

  it("between writing 'submitting' and fal's answer: not sent again by the next worker; failed with a clear error and refunded", async () => {
    const t = await svc.team({ credits: 1000 });
    fal.holdSubmits(true);
    const first = worker();
    const res = await create(t.key, 'killed while submitting');
    const id = res.body.generation_id as string;
    const mine = () => fal.submits.filter((s) => s.input.prompt === 'killed while submitting');
    await waitUntil(async () => mine().length === 1, 30_000, 'the submit to reach fal');
    const state = await svc.app.db.selectFrom('upstream_jobs').select('state').where('generation_id', '=', id).executeTakeFirstOrThrow();
    expect(state.state).toBe('submitting');
    first.child.kill('SIGKILL');
    await first.exited;
    fal.holdSubmits(false);

    worker();
    const done = await waitForGeneration(svc, t.key, id, 60_000);
    expect(done.status).toBe('failed');
    expect(done.error).toBe('the submission to fal was interrupted and cannot be confirmed; it was not sent again so that it is never paid twice');
    expect(mine()).toHaveLength(1);
    expect(await used(t.teamId)).toBe(0);
  }, 120_000);
});
