import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startHeyGenFake } from '../support/heygen-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

// HeyGen's Idempotency-Key: a repeat while the first request under the key is still running is
// answered 409 request_in_progress. The original may yet make the video, so only the same key,
// asked again later, may get it; a new key would be a second video, paid twice.

const HEYGEN_KEY = 'hg-test-key-5c1f0e9a77';
let heygen: Awaited<ReturnType<typeof startHeyGenFake>>;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  heygen = await startHeyGenFake({ key: HEYGEN_KEY, video: await testVideo({ width: 160, height: 90, seconds: 1 }) });
  svc = await startTestService(
    {
      HEYGEN_API_KEY: HEYGEN_KEY,
      HEYGEN_API_URL: heygen.url,
      ENGINE_ROUTES: 'heygen-avatar4=heygen,*=local',
      UPSTREAM_POLL_MS: '200',
      // Every call to HeyGen gives up after a second: the held create below outlives it.
      UPSTREAM_CALL_TIMEOUT_SECONDS: '1',
    },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await heygen?.close();
});

describe('a create HeyGen is still working on when it is sent again', () => {
  it('409 request_in_progress keeps the attempt and its key; the original answer comes back under it, and HeyGen makes one video', async () => {
    const avatar = await svc.app.db.selectFrom('avatars').select('id').where('avatar_type', '=', 'platform').orderBy('name').executeTakeFirstOrThrow();
    const before = (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
    heygen.delaySubmits(6_000);
    const res = await svc.api('POST', '/api/v1/videos/talking-avatar', { key: t.key, body: { avatar_id: avatar.id, avatar_type: 'platform', script: 'Made once, however often asked.', voice_id: VOICES[0]!.id } });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id, 40_000);
    heygen.delaySubmits(0);
    expect(g.status, g.error).toBe('completed');
    const attempts = await svc.app.db.selectFrom('upstream_jobs').selectAll().where('generation_id', '=', res.body.generation_id).execute();
    expect(attempts).toHaveLength(1);
    const creates = heygen.videoCreates.filter((c) => c.body.title === `adforge ${res.body.generation_id}`);
    expect(creates).toHaveLength(1);
    expect(creates[0]!.key).toBe(attempts[0]!.id);
    // It was asked again while HeyGen still worked on it (409), then got the original's answer.
    expect(heygen.inProgressAnswers.get(`/v3/videos ${attempts[0]!.id}`) ?? 0).toBeGreaterThan(0);
    expect(heygen.replayed.get(`/v3/videos ${attempts[0]!.id}`)).toBeGreaterThan(0);
    // Charged once, kept: the video was made.
    const after = (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
    // 20 credits per 250 characters of script, at least 20.
    expect(after - before).toBe(20);
  }, 60_000);
});
