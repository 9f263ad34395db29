import { startHeyGenFake } from '../support/heygen-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { productFace, runFaultMatrix, voiceover } from './runner.ts';

/*
 * HeyGen (heygen-com/heygen-cli's OpenAPI schemas, stored in test/contracts/heygen/): talking
 * avatars and translations are v3 mutations under our attempt id as Idempotency-Key, whose repeat
 * while the first runs HeyGen answers 409 request_in_progress (developers.heygen.com create-video,
 * the Idempotency-Key parameter); the face swap workflow takes no key (n/a). Each has its own read;
 * waiting talking avatars are also read many at a time by id, which the cell makes happen by
 * having two waiting.
 */
const HEYGEN_KEY = 'heygen-matrix-key';
// The team's voiceover and a product's picture as the face, made once before the cells: each talking avatar sends them as they are.
const talking = (i: MatrixInputs) => ({ path: '/api/v1/videos/talking-avatar', body: { avatar_id: i.made.face, avatar_type: 'product', voiceover_id: i.made.voiceover } });
const localize = (i: MatrixInputs) => ({ path: '/api/v1/videos/localize', body: { video_url: i.clipUrl, mode: 'speed', output_language: 'de', duration: 5, width: 640, height: 360 } });
const swap = (i: MatrixInputs) => ({ path: '/api/v1/videos/swap-avatar', body: { video_url: i.clipUrl, mode: 'standard', duration: 5, width: 640, height: 360, image_url: i.faceUrl } });
const heygenError = (status: number, code: string, message: string) => ({ status, body: { error: { code, message, param: null, doc_url: null } } });
const inProgress = heygenError(409, 'request_in_progress', 'A request with this Idempotency-Key is still in progress.');

runFaultMatrix({
  provider: 'heygen',
  async start() {
    const heygen = await startHeyGenFake({ key: HEYGEN_KEY, video: await testVideo({ width: 64, height: 36, seconds: 1 }), pollsUntilDone: 1 });
    return {
      target: heygen.url,
      env: (url) => ({ HEYGEN_API_KEY: HEYGEN_KEY, HEYGEN_API_URL: url, ENGINE_ROUTES: 'heygen-avatar4=heygen,localize=heygen,swap-avatar=heygen,*=local' }),
      billed: () => ({ heygen: heygen.videoCreates.length + heygen.translationCreates.length + heygen.workflowCreates.length }),
      close: () => heygen.close(),
    };
  },
  prepare: async (i) => ({ voiceover: await voiceover(i), face: await productFace(i) }),
  calls: [
    { name: 'POST /v3/videos (talking avatar submit)', method: 'POST', path: /^\/v3\/videos$/, inProgress, create: talking },
    { name: 'GET /v3/videos/{id} (talking avatar read)', method: 'GET', path: /^\/v3\/videos\/(?!statuses$)[^/]+$/, create: talking },
    { name: 'GET /v3/videos/statuses (two talking avatars read at once)', method: 'GET', path: /^\/v3\/videos\/statuses$/, generations: 2, create: talking },
    { name: 'POST /v3/video-translations (localize submit)', method: 'POST', path: /^\/v3\/video-translations$/, inProgress, create: localize },
    { name: 'GET /v3/video-translations/{id} (localize read)', method: 'GET', path: /^\/v3\/video-translations\/[^/]+$/, create: localize },
    { name: 'POST /v1/workflows/executions (face swap submit)', method: 'POST', path: /^\/v1\/workflows\/executions$/, create: swap },
    { name: 'GET /v1/workflows/executions/{id} (face swap read)', method: 'GET', path: /^\/v1\/workflows\/executions\/[^/]+$/, create: swap },
  ],
  // HeyGen's StandardAPIError envelope (test/contracts/heygen/README.md); 429 rate_limit_exceeded with Retry-After.
  errorAnswer: (status) => heygenError(status, status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'internal_error' : 'request_failed', `the matrix answered ${status}`),
});
