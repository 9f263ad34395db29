import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startHeyGenFake, HEYGEN_DOCUMENTED_LANGUAGES } from '../support/heygen-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

/*
 * HeyGen's talking avatars read in batches: GET /v3/videos/statuses answers up to 100 videos named
 * by id, so the look that holds HeyGen's read slot reads the other live videos with its own; a video
 * it shows ended is read once by its own GET (its result URL is there). Under a budget tighter than
 * one read per look, every job still ends, each submitted once.
 */
const KEY = 'hg-batch-key-7c20';
const VOICE_ID = VOICES[0]!.id;
let video: Buffer;

beforeAll(async () => {
  video = await testVideo({ width: 160, height: 90, seconds: 1 });
});

function withHeyGen(fake: Omit<Parameters<typeof startHeyGenFake>[0], 'key' | 'video' | 'languages'>, more: Record<string, string>) {
  const ctx = {} as { heygen: Awaited<ReturnType<typeof startHeyGenFake>>; svc: TestService; t: Awaited<ReturnType<TestService['team']>>; avatar: string };
  beforeAll(async () => {
    ctx.heygen = await startHeyGenFake({ key: KEY, video, languages: HEYGEN_DOCUMENTED_LANGUAGES, ...fake });
    ctx.svc = await startTestService({ HEYGEN_API_KEY: KEY, HEYGEN_API_URL: ctx.heygen.url, ENGINE_ROUTES: 'heygen-avatar4=heygen,*=local', ...more }, { worker: true });
    ctx.t = await ctx.svc.team({ credits: 100_000 });
    ctx.avatar = (await ctx.svc.app.db.selectFrom('avatars').select('id').where('avatar_type', '=', 'platform').orderBy('name').executeTakeFirstOrThrow()).id;
  });
  afterAll(async () => {
    await ctx.svc?.close();
    await ctx.heygen?.close();
  });
  return ctx;
}

type Ctx = ReturnType<typeof withHeyGen>;
const talk = async (c: Ctx, script: string): Promise<string> => {
  const res = await c.svc.api('POST', '/api/v1/videos/talking-avatar', { key: c.t.key, body: { avatar_id: c.avatar, avatar_type: 'platform', script, voice_id: VOICE_ID } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.generation_id as string;
};
const used = async (c: Ctx) => (await c.svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', c.t.teamId).executeTakeFirstOrThrow()).credits_used;
const reads = (c: Ctx) => c.heygen.readLog.filter((r) => r.status === 200).length;

describe('talking avatars are read by id, many to a request', () => {
  // Each video ends on its third look; HeyGen allows 3 reads a second, the budget 2.
  const c = withHeyGen({ pollsUntilDone: 2, readLimit: { requests: 3, perMs: 1000, retryAfterSeconds: 1 } }, { UPSTREAM_POLL_MS: '40', HEYGEN_POLL_BUDGET: '2/1' });

  it('32 live videos complete, each submitted once, with far fewer reads than looks and no 429', async () => {
    const ids = await Promise.all(Array.from({ length: 32 }, (_, i) => talk(c, `Batch number ${i}.`)));
    for (const id of ids) {
      const g = await waitForGeneration(c.svc, c.t.key, id, 120_000);
      expect(g.status, g.error).toBe('completed');
      expect((await c.svc.fetchUrl(g.result_url)).bytes.equals(video)).toBe(true);
    }
    expect(c.heygen.videoCreates).toHaveLength(32);
    expect(new Set(c.heygen.videoCreates.map((v) => v.key)).size).toBe(32);
    expect(c.heygen.readLog.filter((r) => r.status === 429)).toEqual([]);
    // A read a look would be 96 reads (three looks each, then the result); the statuses read covers the waiting ones at once.
    expect(reads(c)).toBeLessThan(64);
    expect(Math.max(...c.heygen.statusReads.map((p) => p.ids.length))).toBeGreaterThanOrEqual(10);
    for (const p of c.heygen.statusReads) expect(p.ids.length).toBeLessThanOrEqual(100);
    expect(c.heygen.refused).toEqual([]);
  }, 180_000);

  it('a video that fails fails its generation with its own words and refunds it; the others complete', async () => {
    const before = await used(c);
    const createdBefore = c.heygen.videoCreates.length;
    const sent = async (n: number) => {
      while (c.heygen.videoCreates.length < createdBefore + n) await new Promise((r) => setTimeout(r, 20));
    };
    const ok = await Promise.all(Array.from({ length: 4 }, (_, i) => talk(c, `Fine ${i}.`)));
    await sent(4);
    // The next video HeyGen makes fails: submitted alone, between the others.
    c.heygen.refuseNextVideo('No face detected in the image');
    const bad = await talk(c, 'No face here.');
    await sent(5);
    const badVideo = [...c.heygen.jobs.entries()].find(([, j]) => j.failure)![0];
    const more = await Promise.all(Array.from({ length: 4 }, (_, i) => talk(c, `Fine again ${i}.`)));
    const g = await waitForGeneration(c.svc, c.t.key, bad, 60_000);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('HeyGen could not make the video: No face detected in the image');
    for (const id of [...ok, ...more]) expect((await waitForGeneration(c.svc, c.t.key, id, 60_000)).status).toBe('completed');
    // The failed one's credits came back: only the eight that completed are charged.
    const charged = await c.svc.app.db.selectFrom('generations').select('credits').where('id', 'in', [...ok, ...more]).execute();
    expect((await used(c)) - before).toBe(charged.reduce((n, r) => n + r.credits, 0));
    expect(c.heygen.readLog.filter((r) => r.status === 429)).toEqual([]);
    // It was read with the others while it waited.
    expect(c.heygen.statusReads.some((p) => p.ids.includes(badVideo) && p.ids.length > 1)).toBe(true);
  }, 120_000);
});

describe('a read of many that fails', () => {
  const c = withHeyGen({ pollsUntilDone: 3 }, { UPSTREAM_POLL_MS: '40', HEYGEN_POLL_BUDGET: '4/1' });

  it('an answer too large, then a refused read, fail no generation: each job is read alone and every one completes', async () => {
    const before = await used(c);
    c.heygen.breakNextLists('oversized', 'refused');
    const ids = await Promise.all(Array.from({ length: 6 }, (_, i) => talk(c, `Read alone if need be ${i}.`)));
    for (const id of ids) {
      const g = await waitForGeneration(c.svc, c.t.key, id, 60_000);
      expect(g.status, g.error).toBe('completed');
    }
    // Both broken reads happened (the batch was tried), and no job was submitted twice.
    expect(c.heygen.brokenListsLeft()).toBe(0);
    expect(c.heygen.videoCreates).toHaveLength(6);
    const charged = await c.svc.app.db.selectFrom('generations').select('credits').where('id', 'in', ids).execute();
    expect((await used(c)) - before).toBe(charged.reduce((n, r) => n + r.credits, 0));
  }, 90_000);
});

describe('a video behind hundreds of newer ones on the account', () => {
  // Every video needs many looks, so the old one is still live when the newer ones arrive.
  const c = withHeyGen({ pollsUntilDone: 12 }, { UPSTREAM_POLL_MS: '40', HEYGEN_POLL_BUDGET: '20/1' });

  it('is read by id with the newer ones of ours, however many other videos the account holds', async () => {
    const old = await talk(c, 'I came first.');
    const submitted = async () => (await c.svc.app.db.selectFrom('upstream_jobs').select('provider_job_id').where('generation_id', '=', old).where('state', '=', 'submitted').executeTakeFirst())?.provider_job_id;
    while (!(await submitted())) await new Promise((r) => setTimeout(r, 20));
    const oldVideo = (await submitted())!;
    c.heygen.addOtherVideos(400);
    const fresh = await Promise.all(Array.from({ length: 3 }, (_, i) => talk(c, `Newer ${i}.`)));
    for (const id of [old, ...fresh]) {
      const g = await waitForGeneration(c.svc, c.t.key, id, 60_000);
      expect(g.status, g.error).toBe('completed');
    }
    expect(c.heygen.statusReads.some((p) => p.ids.includes(oldVideo) && p.ids.length > 1)).toBe(true);
    // Only our own videos are ever asked for.
    for (const p of c.heygen.statusReads) for (const id of p.ids) expect(id.startsWith('vid_other_')).toBe(false);
    expect(c.heygen.videoCreates).toHaveLength(4);
    expect(c.heygen.refused).toEqual([]);
  }, 90_000);
});
