import { startOpenAiFake } from '../support/openai-fake.ts';
import { pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { runFaultMatrix } from './runner.ts';

/*
 * OpenAI's Images API (openai/openai-openapi, stored in test/contracts/openai/): one request makes
 * the images and answers them, so the submit is also the read that decides the job's end. OpenAI
 * documents no idempotency key for it, so no "still in progress" answer (n/a); OpenAI keeps
 * generating after a client disconnects, so a request sent is a request billed.
 */
const OPENAI_KEY = 'sk-matrix-openai';
const textToImage = (_: MatrixInputs) => ({ path: '/api/v1/images/text-to-image', body: { model: 'gpt-2', prompt: 'one square', aspect_ratio: '1:1' } });
const imageEdit = (i: MatrixInputs) => ({ path: '/api/v1/images/edit', body: { model: 'gpt-2', prompt: 'put it on a shelf', aspect_ratio: '1:1', reference_image_urls: [i.faceUrl] } });

runFaultMatrix({
  provider: 'openai',
  async start() {
    const openai = await startOpenAiFake({ key: OPENAI_KEY, video: await testVideo({ width: 64, height: 36, seconds: 1, audio: false }), png: await pngBytes(32, 32) });
    return {
      target: new URL(openai.url).origin,
      env: (url) => ({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: `${url}/v1`, ENGINE_ROUTES: 'gpt-2=openai,*=local' }),
      billed: () => ({ openai: openai.imageCreates.length + openai.imageEdits.length }),
      close: () => openai.close(),
    };
  },
  calls: [
    { name: 'POST /v1/images/generations (submit and answer)', method: 'POST', path: /^\/v1\/images\/generations$/, create: textToImage },
    { name: 'POST /v1/images/edits (submit and answer)', method: 'POST', path: /^\/v1\/images\/edits$/, create: imageEdit },
  ],
  // OpenAI's ErrorResponse (#/components/schemas/ErrorResponse of its OpenAPI document).
  errorAnswer: (status) => ({ status, body: { error: { message: `the matrix answered ${status}`, type: status === 429 ? 'requests' : 'server_error', param: null, code: status === 429 ? 'rate_limit_exceeded' : null } } }),
});
