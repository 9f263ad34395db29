import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendBytes, startImageHost } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startSubmagicFake } from '../support/submagic-fake.ts';
import { spawnWorker, startTestService, waitForGeneration, type TestService } from '../support/app.ts';

/*
 * A provider's poll budget holds across jobs and worker processes (one row per provider in the
 * database), and a 429 holds back every read of the provider for the wait it names. Submagic's
 * fake refuses project reads past its limit, here a window of seconds instead of its documented
 * hour so that the test runs in seconds.
 */
const KEY = 'sk-submagic-budget-7e21';
const WINDOW = { requests: 5, perMs: 2000 };
let video: Buffer;
let host: Awaited<ReturnType<typeof startImageHost>>;

beforeAll(async () => {
  video = await testVideo({ width: 160, height: 90, seconds: 1 });
  host = await startImageHost({ '/talk.mp4': sendBytes(await testVideo({ width: 320, height: 180, seconds: 1 }), 'video/mp4') });
});
afterAll(async () => {
  await host?.close();
});

/** The most reads the fake saw in any window of `perMs` (half-open, as it counts them). */
function busiestWindow(times: number[], perMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[j]! <= times[i]! - perMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

async function service(submagicUrl: string, budget: string) {
  const env = { SUBMAGIC_API_KEY: KEY, SUBMAGIC_API_URL: submagicUrl, SUBMAGIC_POLL_BUDGET: budget, ENGINE_ROUTES: 'video-edit=submagic,*=local', UPSTREAM_POLL_MS: '40' };
  const svc = await startTestService(env, { worker: true });
  // A second worker process on the same database: both run the polls.
  const other = spawnWorker(svc, env);
  await other.waitForStdout(/worker/i, 30_000).catch(() => undefined);
  return { svc, other, team: await svc.team({ credits: 100_000 }) };
}

async function editMany(svc: TestService, key: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await svc.api('POST', '/api/v1/videos/edit', { key, body: { template_id: 'bold-pop', video_url: host.url('/talk.mp4'), language: 'en' } });
    expect(res.status).toBe(202);
    ids.push(res.body.generation_id);
  }
  return ids;
}

/** A Submagic fake and a service with a second worker process, for the describe that calls it. */
function withService(fake: { projectReads: { requests: number; perMs: number }; retryAfterSeconds: number }, budget: string) {
  const ctx = {} as { submagic: Awaited<ReturnType<typeof startSubmagicFake>> } & Awaited<ReturnType<typeof service>>;
  beforeAll(async () => {
    ctx.submagic = await startSubmagicFake({ key: KEY, video, ...fake });
    Object.assign(ctx, await service(ctx.submagic.url, budget));
  }, 60_000);
  afterAll(async () => {
    ctx.other?.child.kill('SIGTERM');
    await ctx.other?.exited;
    await ctx.svc?.close();
    await ctx.submagic?.close();
  });
  return ctx;
}

describe('a poll budget shared by two worker processes', () => {
  // 4 reads every 2 s against the fake's 5: a read's arrival may lag its slot by a few ms.
  const s = withService({ projectReads: WINDOW, retryAfterSeconds: 2 }, '4/2');

  it('six edits polled every 40 ms by two workers complete with no read refused: the fake never saw more than its limit in a window', async () => {
    const ids = await editMany(s.svc, s.team.key, 6);
    for (const id of ids) expect((await waitForGeneration(s.svc, s.team.key, id, 120_000)).status).toBe('completed');
    const log = s.submagic.readLog;
    expect(log.filter((r) => r.status === 429)).toEqual([]);
    // Each edit is read at least three times (transcribing, transcribed then exported, rendered).
    expect(log.length).toBeGreaterThanOrEqual(ids.length * 3);
    expect(busiestWindow(log.map((r) => r.at), WINDOW.perMs)).toBeLessThanOrEqual(WINDOW.requests);
    const submits = [...s.submagic.projects.values()].filter((p) => ids.some((id) => p.title === `adforge ${id}`));
    expect(submits).toHaveLength(ids.length);
  }, 150_000);
});

describe('a 429 holds back every read of the provider', () => {
  const RETRY_S = 2;
  // A budget far over the fake's limit: the fake refuses, and its retryAfter is what spaces the reads.
  const s = withService({ projectReads: { requests: 4, perMs: 5000 }, retryAfterSeconds: RETRY_S }, '1000/1');

  it("after a 429, no read of any job goes before its retryAfter; the edits still complete, each submitted once", async () => {
    const ids = await editMany(s.svc, s.team.key, 3);
    for (const id of ids) expect((await waitForGeneration(s.svc, s.team.key, id, 120_000)).status).toBe('completed');
    const log = s.submagic.readLog;
    const refused = log.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      // A read already on its way when the 429 came (within a few ms) may arrive; none sent after it.
      const early = log.filter((x) => x.at > r.at + 100 && x.at < r.at + RETRY_S * 1000 - 100);
      expect(early, `reads within ${RETRY_S} s of the 429 at ${r.at}`).toEqual([]);
    }
    expect([...s.submagic.projects.values()].filter((p) => ids.some((id) => p.title === `adforge ${id}`))).toHaveLength(ids.length);
  }, 150_000);
});
