import { startGeminiFake } from '../support/gemini-fake.ts';
import { pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { runFaultMatrix } from './runner.ts';

/*
 * The Gemini API (googleapis/js-genai, stored in test/contracts/gemini/): images are made one per
 * generateContent call, so two images are two billed calls. Google documents no idempotency key for
 * it, so no "still in progress" answer (n/a). Veo on the Gemini API is not here: Google shut its
 * Veo 3.1 preview models down on 2026-10-22 and a route that sends Veo to Gemini stops the start.
 */
const GEMINI_KEY = 'gemini-matrix-key';
const twoImages = (_: MatrixInputs) => ({ path: '/api/v1/images/text-to-image', body: { model: 'fast', prompt: 'two cups', aspect_ratio: '1:1', quantity: 2 } });
// Google's error status names by HTTP status (google.rpc.Code, as its APIs map them).
const STATUS: Record<number, string> = { 408: 'DEADLINE_EXCEEDED', 409: 'ABORTED', 425: 'UNAVAILABLE', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 502: 'UNAVAILABLE', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED' };

runFaultMatrix({
  provider: 'gemini',
  async start() {
    const gemini = await startGeminiFake({ key: GEMINI_KEY, video: await testVideo({ width: 64, height: 36, seconds: 1 }), png: await pngBytes(32, 32), pollsUntilDone: 1 });
    return {
      target: gemini.base,
      env: (url) => ({ GEMINI_API_KEY: GEMINI_KEY, GEMINI_API_URL: `${url}/v1beta`, ENGINE_ROUTES: 'fast=gemini,*=local' }),
      // Images answered, or made and lost on the way (the fake's billedImages: Google charges no failed request).
      billed: () => ({ gemini: gemini.billedImages.length }),
      close: () => gemini.close(),
    };
  },
  calls: [
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
