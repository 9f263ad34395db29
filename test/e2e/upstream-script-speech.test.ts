import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../support/elevenlabs-fake.ts';
import { startHeyGenFake } from '../support/heygen-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

/*
 * A talking avatar's script spoken by ElevenLabs (SPEECH_ENGINE=elevenlabs) before HeyGen animates
 * it. ElevenLabs bills speech by its characters when it makes it and takes no idempotency key: a
 * script whose answer was lost once sent may have been made and paid, and is never asked again.
 */
const XI_KEY = 'xi-script-speech-key-3c9d';
const HEYGEN_KEY = 'hg-script-speech-key-71e0';
const voice = VOICES[0]!;
const PROVIDER_VOICE = 'EXAVITQu4vr4xnSDxMaL';
let eleven: ElevenLabsFake;
let heygen: Awaited<ReturnType<typeof startHeyGenFake>>;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;
let avatarId: string;

beforeAll(async () => {
  eleven = await startElevenLabsFake({ apiKey: XI_KEY, voices: [PROVIDER_VOICE] });
  heygen = await startHeyGenFake({ key: HEYGEN_KEY, video: await testVideo({ width: 160, height: 90, seconds: 1 }), pollsUntilDone: 1 });
  svc = await startTestService(
    {
      SPEECH_ENGINE: 'elevenlabs',
      ELEVENLABS_API_URL: eleven.baseUrl,
      ELEVENLABS_API_KEY: XI_KEY,
      ELEVENLABS_VOICE_IDS: `${voice.id}=${PROVIDER_VOICE}`,
      HEYGEN_API_KEY: HEYGEN_KEY,
      HEYGEN_API_URL: heygen.url,
      ENGINE_ROUTES: 'heygen-avatar4=heygen,*=local',
      UPSTREAM_POLL_MS: '40',
      // A call ElevenLabs holds past a second has its answer lost (the operator's cap; before it, the speech engine's limit).
      UPSTREAM_CALL_TIMEOUT_SECONDS: '1',
      SPEECH_TIMEOUT_SECONDS: '1',
    },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
  avatarId = (await svc.app.db.selectFrom('avatars').select('id').where('avatar_type', '=', 'platform').orderBy('name').executeTakeFirstOrThrow()).id;
}, 120_000);
afterAll(async () => {
  await svc?.close();
  await heygen?.close();
  await eleven?.close();
});
beforeEach(() => eleven.reset());

const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const talk = (script: string) => svc.api('POST', '/api/v1/videos/talking-avatar', { key: t.key, body: { avatar_id: avatarId, avatar_type: 'platform', script, voice_id: voice.id } });
const billedFor = (script: string) => eleven.billed.filter((b) => b.characters === [...script].length);
const createsFor = (id: string) => heygen.videoCreates.filter((c) => String(c.body.title).includes(id));

describe("a talking avatar's script spoken by ElevenLabs", () => {
  it('is spoken once and animated by HeyGen', async () => {
    const res = await talk('Spoken once, by ElevenLabs.');
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status, g.error).toBe('completed');
    expect(billedFor('Spoken once, by ElevenLabs.')).toHaveLength(1);
  });

  for (const [lost, arrange] of [
    ['cut off', () => (eleven.control.fail = { with: 'cut', times: 1 })],
    ['held past the call limit', () => (eleven.control.delayMs = 2_500)],
  ] as const) {
    it(`whose answer was ${lost} once ElevenLabs made it is not asked again: the generation fails at once and is refunded`, async () => {
      const script = `Lost once: ${lost}.`;
      const before = await used();
      arrange();
      const res = await talk(script);
      const g = await waitForGeneration(svc, t.key, res.body.generation_id, 15_000);
      expect(g.status).toBe('failed');
      expect(g.error).toBe('elevenlabs did not confirm the speech of the script; it was not asked again so that it is never paid twice');
      expect(billedFor(script)).toHaveLength(1);
      expect(createsFor(res.body.generation_id)).toHaveLength(0);
      expect(await used()).toBe(before);
    }, 30_000);
  }

  it('refused system_busy (nothing made) is asked again, and completes with one bill', async () => {
    eleven.control.fail = { with: 'system-busy', times: 1 };
    const res = await talk('Busy, then spoken.');
    const g = await waitForGeneration(svc, t.key, res.body.generation_id, 30_000);
    expect(g.status, g.error).toBe('completed');
    expect(billedFor('Busy, then spoken.')).toHaveLength(1);
    expect(eleven.requests.filter((r) => r.status === 429)).toHaveLength(1);
  }, 40_000);
});
