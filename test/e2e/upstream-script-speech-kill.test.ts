import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../support/elevenlabs-fake.ts';
import { startHeyGenFake } from '../support/heygen-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import { spawnWorker, startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { waitUntil, type LongRunning } from '../support/cli-run.ts';

// A real `adforge worker` SIGKILLed while ElevenLabs makes the speech of a talking avatar's script.
const XI_KEY = 'xi-speech-kill-key-5a1e';
const HEYGEN_KEY = 'hg-speech-kill-key-0c42';
const voice = VOICES[0]!;
const PROVIDER_VOICE = 'EXAVITQu4vr4xnSDxMaL';
let eleven: ElevenLabsFake;
let heygen: Awaited<ReturnType<typeof startHeyGenFake>>;
let svc: TestService;
const children: LongRunning[] = [];
let env: Record<string, string>;

beforeAll(async () => {
  eleven = await startElevenLabsFake({ apiKey: XI_KEY, voices: [PROVIDER_VOICE] });
  heygen = await startHeyGenFake({ key: HEYGEN_KEY, video: await testVideo({ width: 160, height: 90, seconds: 1 }), pollsUntilDone: 1 });
  env = {
    SPEECH_ENGINE: 'elevenlabs',
    ELEVENLABS_API_URL: eleven.baseUrl,
    ELEVENLABS_API_KEY: XI_KEY,
    ELEVENLABS_VOICE_IDS: `${voice.id}=${PROVIDER_VOICE}`,
    HEYGEN_API_KEY: HEYGEN_KEY,
    HEYGEN_API_URL: heygen.url,
    ENGINE_ROUTES: 'heygen-avatar4=heygen,*=local',
  };
  svc = await startTestService(env);
}, 120_000);
const stopWorkers = async () => {
  for (const c of children) if (c.running()) c.child.kill('SIGKILL');
  await Promise.all(children.splice(0).map((c) => c.waitForExit(5_000)));
};
afterEach(stopWorkers);
afterAll(async () => {
  await stopWorkers();
  await svc?.close();
  await heygen?.close();
  await eleven?.close();
});

function worker() {
  const c = spawnWorker(svc, { ...env, UPSTREAM_POLL_MS: '100' });
  children.push(c);
  return c;
}

describe('a worker SIGKILLed while ElevenLabs speaks the script', () => {
  it('the next worker does not ask ElevenLabs again: the generation fails with a clear error and is refunded, ElevenLabs billed once', async () => {
    const t = await svc.team({ credits: 1000 });
    const avatar = await svc.app.db.selectFrom('avatars').select('id').where('avatar_type', '=', 'platform').orderBy('name').executeTakeFirstOrThrow();
    const script = 'Spoken while the worker died.';
    eleven.control.delayMs = 60_000;
    const first = worker();
    const res = await svc.api('POST', '/api/v1/videos/talking-avatar', { key: t.key, body: { avatar_id: avatar.id, avatar_type: 'platform', script, voice_id: voice.id } });
    const id = res.body.generation_id as string;
    const billed = () => eleven.billed.filter((b) => b.characters === [...script].length);
    await waitUntil(async () => billed().length === 1, 30_000, 'ElevenLabs to make the speech');
    first.child.kill('SIGKILL');
    await first.exited;
    eleven.control.delayMs = 0;

    worker();
    const done = await waitForGeneration(svc, t.key, id, 60_000);
    expect(done.status).toBe('failed');
    expect(done.error).toBe('the speech of the script asked of elevenlabs was interrupted and cannot be confirmed; it was not asked again so that it is never paid twice');
    expect(billed()).toHaveLength(1);
    expect(heygen.videoCreates).toHaveLength(0);
    const team = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(team.credits_used).toBe(0);
  }, 120_000);
});
