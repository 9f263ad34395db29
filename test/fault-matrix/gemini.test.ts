import { startGeminiFake } from '../support/gemini-fake.ts';
import { pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { runFaultMatrix } from './runner.ts';

/*
 * The Gemini API (googleapis/js-genai, stored in test/contracts/gemini/): Veo starts a long-running
 * operation, polled until done, its video read from a file link that redirects to storage; images
 * are made one per generateContent call, so two images are two billed calls. Google documents no
 * idempotency key for either, so no "still in progress" answer (n/a).
 */
const GEMINI_KEY = 'gemini-matrix-key';
const veo = (_: MatrixInputs) => ({ path: '/api/v1/videos/ai-video', body: { model: 'veo-3.1', prompt: 'a lighthouse at dawn', aspect_ratio: '16:9', duration: 4, generate_audio: true } });
const twoImages = (_: MatrixInputs) => ({ path: '/api/v1/images/text-to-image', body: { model: 'fast', prompt: 'two cups', aspect_ratio: '1:1', quantity: 2 } });
// Google's error status names by HTTP status (google.rpc.Code, as its APIs map them).
const STATUS: Record<number, string> = { 408: 'DEADLINE_EXCEEDED', 409: 'ABORTED', 425: 'UNAVAILABLE', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 502: 'UNAVAILABLE', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED' };

runFaultMatrix({
  provider: 'gemini',
  async start() {
    const gemini = await startGeminiFake({ key: GEMINI_KEY, video: await testVideo({ width: 64, height: 36, seconds: 1 }), png: await pngBytes(32, 32), pollsUntilDone: 1 });
    return {
      target: gemini.base,
      env: (url) => ({ GEMINI_API_KEY: GEMINI_KEY, GEMINI_API_URL: `${url}/v1beta`, ENGINE_ROUTES: 'veo-3.1=gemini,fast=gemini,*=local' }),
      billed: () => ({ gemini: gemini.videoSubmits.length + gemini.imageCalls.length }),
      close: () => gemini.close(),
    };
  },
  calls: [
    { name: 'POST …:predictLongRunning (Veo submit)', method: 'POST', path: /:predictLongRunning$/, create: veo },
    { name: 'GET …/operations/{id} (Veo read)', method: 'GET', path: /\/operations\/[^/]+$/, create: veo },
    { name: 'GET files/{id}:download (Veo result)', method: 'GET', path: /^\/v1beta\/files\/[^/]+:download$/, create: veo },
    { name: 'POST …:generateContent (image 1 of 2)', method: 'POST', path: /:generateContent$/, units: { gemini: 2 }, create: twoImages },
    { name: 'POST …:generateContent (image 2 of 2)', method: 'POST', path: /:generateContent$/, skip: 1, units: { gemini: 2 }, create: twoImages },
  ],
  // Google's error body {error: {code, message, status, details}}; a 429's wait as RetryInfo.retryDelay (google.rpc.RetryInfo).
  errorAnswer: (status, retryAfterSeconds) => ({
    status,
    body: {
      error: {
        code: status,
        message: `the matrix answered ${status}`,
        status: STATUS[status] ?? 'UNKNOWN',
        ...(retryAfterSeconds ? { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfterSeconds}s` }] } : {}),
      },
    },
  }),
});
