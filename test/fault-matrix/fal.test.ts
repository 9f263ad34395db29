import { startFalFake } from '../support/fal-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { runFaultMatrix } from './runner.ts';

/*
 * fal's queue (fal-ai/fal-js libs/client/src/queue.ts): the submit starts a paid job; the status
 * read says when it ended; the result read gives its output. fal takes no idempotency key, so
 * no "still in progress" answer exists for a repeated submit (n/a).
 */
const FAL_KEY = 'fal-matrix-key';
const veo = (_: MatrixInputs) => ({ path: '/api/v1/videos/ai-video', body: { model: 'veo-3.1', prompt: 'a lighthouse at dawn', aspect_ratio: '16:9', duration: 4 } });

runFaultMatrix({
  provider: 'fal',
  async start() {
    const fal = await startFalFake({ key: FAL_KEY, video: await testVideo({ width: 64, height: 36, seconds: 1, audio: false }), pollsUntilDone: 1 });
    return {
      target: fal.url,
      env: (url) => ({ FAL_KEY, FAL_QUEUE_URL: url, ENGINE_ROUTES: 'veo-3.1=fal,*=local' }),
      billed: () => ({ fal: fal.submits.length }),
      close: () => fal.close(),
    };
  },
  calls: [
    { name: 'POST /{endpoint} (submit)', method: 'POST', path: /^\/fal-ai\/veo3\.1$/, create: veo },
    { name: 'GET …/requests/{id}/status (read)', method: 'GET', path: /\/requests\/[^/]+\/status$/, create: veo },
    { name: 'GET …/requests/{id} (result)', method: 'GET', path: /\/requests\/[^/]+$/, create: veo },
  ],
  // fal's error body (https://docs.fal.ai/errors): {detail}.
  errorAnswer: (status) => ({ status, body: { detail: `the matrix answered ${status}` } }),
});
