import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startElevenLabsFake } from '../support/elevenlabs-fake.ts';
import { startHeyGenFake } from '../support/heygen-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { productFace, runFaultMatrix } from './runner.ts';

/*
 * ElevenLabs speech (its OpenAPI document, stored in test/contracts/elevenlabs/) bills every
 * text-to-speech request by its characters. A talking avatar's script is spoken by it once, in the
 * generation's worker, before HeyGen (reached directly, not faulted) animates it; ElevenLabs takes
 * no idempotency key (n/a). Both providers' jobs are counted.
 */
const XI_KEY = 'xi-matrix-key';
const VOICE = VOICES[0]!;
const PROVIDER_VOICE = 'EXAVITQu4vr4xnSDxMaL';
const HEYGEN_KEY = 'heygen-matrix-key';
const spoken = (i: MatrixInputs) => ({ path: '/api/v1/videos/talking-avatar', body: { avatar_id: i.made.face, avatar_type: 'product', script: 'Fresh coffee, every morning.', voice_id: VOICE.id } });

runFaultMatrix({
  provider: 'elevenlabs',
  async start() {
    const eleven = await startElevenLabsFake({ apiKey: XI_KEY, voices: [PROVIDER_VOICE] });
    const heygen = await startHeyGenFake({ key: HEYGEN_KEY, video: await testVideo({ width: 64, height: 36, seconds: 1 }), pollsUntilDone: 1 });
    return {
      target: eleven.baseUrl,
      env: (url) => ({
        SPEECH_ENGINE: 'elevenlabs',
        ELEVENLABS_API_URL: url,
        ELEVENLABS_API_KEY: XI_KEY,
        ELEVENLABS_VOICE_IDS: `${VOICE.id}=${PROVIDER_VOICE}`,
        HEYGEN_API_KEY: HEYGEN_KEY,
        HEYGEN_API_URL: heygen.url,
        ENGINE_ROUTES: 'heygen-avatar4=heygen,*=local',
      }),
      billed: () => ({
        // Speech made is billed, its answer received or not (the fake's `billed`: ElevenLabs takes no idempotency key).
        elevenlabs: eleven.billed.filter((b) => b.path.includes('/text-to-speech/')).length,
        heygen: heygen.videoCreates.length,
      }),
      close: async () => {
        await eleven.close();
        await heygen.close();
      },
    };
  },
  prepare: async (i) => ({ face: await productFace(i) }),
  calls: [{ name: 'POST /v1/text-to-speech/{voice} (the script spoken)', method: 'POST', path: /^\/v1\/text-to-speech\/[^/]+$/, create: spoken }],
  // ElevenLabs' error body {detail: {status, message}} (its errors page).
  errorAnswer: (status) => ({ status, body: { detail: { status: status === 429 ? 'too_many_concurrent_requests' : 'internal_error', message: `the matrix answered ${status}` } } }),
});
