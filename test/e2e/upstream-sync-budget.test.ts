import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { testVideo } from '../support/media-probe.ts';
import { startSyncFake } from '../support/sync-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

// sync.so limits reading generations (600 a minute per IP); its fake here allows 2 a second, and SYNC_POLL_BUDGET keeps under it.
const SYNC_KEY = 'sync-budget-key-51c0';
let sync: Awaited<ReturnType<typeof startSyncFake>>;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  const video = await testVideo({ width: 160, height: 90, seconds: 1 });
  sync = await startSyncFake({ key: SYNC_KEY, webhookSecret: 'whsec_budget', video, pollsUntilDone: 3, readLimit: { requests: 2, perMs: 1000 } });
  // No webhook secret: polling alone, every 40 ms as far as the jobs' age goes.
  svc = await startTestService({ SYNC_API_KEY: SYNC_KEY, SYNC_API_URL: sync.url, ENGINE_ROUTES: 'lipsync-2.0=sync,*=local', UPSTREAM_POLL_MS: '40', SYNC_POLL_BUDGET: '1/1,60/60' }, { worker: true });
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await sync?.close();
});

describe("sync.so's poll budget", () => {
  it('three talking avatars polled every 40 ms complete with no 429: SYNC_POLL_BUDGET=1/1,60/60 under the fake 2 a second (without it, the same run meets 429s)', async () => {
    const avatarId = (await svc.app.db.selectFrom('avatars').select('id').where('avatar_type', '=', 'platform').orderBy('name').executeTakeFirstOrThrow()).id;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await svc.api('POST', '/api/v1/videos/talking-avatar', {
        key: t.key,
        body: { avatar_id: avatarId, avatar_type: 'platform', script: `Budget ${i}.`, voice_id: VOICES[1]!.id, lipsync_model: 'lipsync-2.0' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      ids.push(res.body.generation_id);
    }
    for (const id of ids) expect((await waitForGeneration(svc, t.key, id, 90_000)).status).toBe('completed');
    // Each generation ends on its fourth look; a read (its own, or the list of many) is one look of each it shows.
    expect(sync.readLog.length).toBeGreaterThanOrEqual(4);
    expect(sync.readLog.filter((r) => r.status === 429)).toEqual([]);
    expect(sync.submits).toHaveLength(ids.length);
  }, 120_000);

  it('twelve live talking avatars are read many to a request by GET /v2/generations?ids=: fewer reads than jobs, each submitted once, no 429', async () => {
    const avatarId = (await svc.app.db.selectFrom('avatars').select('id').where('avatar_type', '=', 'platform').orderBy('name').executeTakeFirstOrThrow()).id;
    const [reads, submits, lists] = [sync.readLog.length, sync.submits.length, sync.listReads.length];
    const ids = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const res = await svc.api('POST', '/api/v1/videos/talking-avatar', {
          key: t.key,
          body: { avatar_id: avatarId, avatar_type: 'platform', script: `Many ${i}.`, voice_id: VOICES[1]!.id, lipsync_model: 'lipsync-2.0' },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(202);
        return res.body.generation_id as string;
      }),
    );
    for (const id of ids) expect((await waitForGeneration(svc, t.key, id, 90_000)).status).toBe('completed');
    expect(sync.submits.length - submits).toBe(12);
    expect(sync.readLog.filter((r) => r.status === 429)).toEqual([]);
    // Four looks each would be 48 reads one by one.
    expect(sync.readLog.length - reads).toBeLessThan(12);
    const pages = sync.listReads.slice(lists);
    expect(Math.max(...pages.map((p) => p.ids.length))).toBeGreaterThanOrEqual(4);
    for (const p of pages) expect(p.limit).toBe(100);
  }, 120_000);
});
