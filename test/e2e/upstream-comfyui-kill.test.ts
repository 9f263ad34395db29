import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startComfyFake, type ComfyFake } from '../support/comfyui-fake.ts';
import { pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { spawnWorker, startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { waitUntil, type LongRunning } from '../support/cli-run.ts';

// Real `adforge worker` processes killed with SIGKILL while ComfyUI holds their job: the prompt_id is ours, so no second prompt.
let comfy: ComfyFake;
let svc: TestService;
const children: LongRunning[] = [];
const ENV = () => ({ COMFYUI_URL: comfy.url, ENGINE_ROUTES: 'text-to-image=comfyui,*=local', UPSTREAM_POLL_MS: '100' });

beforeAll(async () => {
  comfy = await startComfyFake({ png: await pngBytes(64, 64, '#118844'), mp4: await testVideo({ width: 160, height: 96, seconds: 1, audio: false }) });
  svc = await startTestService(ENV());
});
// Each test's workers end with it, so none is left to take the next test's job.
async function stopWorkers() {
  const started = children.splice(0);
  for (const c of started.filter((w) => w.running())) c.child.kill('SIGKILL');
  await Promise.all(started.map((c) => c.waitForExit(5_000)));
}
afterEach(stopWorkers);
afterAll(async () => {
  await stopWorkers();
  await Promise.all([svc?.close(), comfy?.close()]);
});

function worker() {
  const c = spawnWorker(svc, ENV());
  children.push(c);
  return c;
}
const used = async (teamId: string) => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow()).credits_used;
const create = (key: string, prompt: string) => svc.api('POST', '/api/v1/images/text-to-image', { key, body: { model: 'fast', prompt, aspect_ratio: '1:1' } });
const stateOf = async (id: string) => (await svc.app.db.selectFrom('upstream_jobs').select(['state', 'id']).where('generation_id', '=', id).executeTakeFirstOrThrow());

describe('a worker SIGKILLed while its generation is on ComfyUI', () => {
  it('after the submit: another worker polls it to the end; one prompt; charged once', async () => {
    const t = await svc.team({ credits: 1000 });
    comfy.hold();
    const first = worker();
    const id = (await create(t.key, 'killed after submit')).body.generation_id as string;
    await waitUntil(async () => (await svc.app.db.selectFrom('upstream_jobs').select('state').where('generation_id', '=', id).executeTakeFirst())?.state === 'submitted', 30_000, 'the submit');
    first.child.kill('SIGKILL');
    await first.exited;
    const charged = await used(t.teamId);
    worker();
    comfy.release();
    const done = await waitForGeneration(svc, t.key, id, 60_000);
    expect(done.status, done.error).toBe('completed');
    const { id: attempt } = await stateOf(id);
    expect(comfy.posts.filter((p) => p.promptId === attempt)).toHaveLength(1);
    expect(await used(t.teamId)).toBe(charged);
  }, 120_000);

  it("between writing 'submitting' and ComfyUI's answer: the next worker finds the prompt and queues nothing twice", async () => {
    const t = await svc.team({ credits: 1000 });
    comfy.hold();
    comfy.stallNextAnswer();
    const first = worker();
    const id = (await create(t.key, 'killed while submitting')).body.generation_id as string;
    await waitUntil(async () => comfy.posts.some((p) => !p.answered), 30_000, 'the submit to reach ComfyUI');
    const { state, id: attempt } = await stateOf(id);
    expect(state).toBe('submitting');
    first.child.kill('SIGKILL');
    await first.exited;
    worker();
    comfy.release();
    const done = await waitForGeneration(svc, t.key, id, 90_000);
    expect(done.status, done.error).toBe('completed');
    expect(comfy.posts.filter((p) => p.promptId === attempt)).toHaveLength(1);
    expect(comfy.problems).toEqual([]);
  }, 150_000);
});
