import { startSubmagicFake } from '../support/submagic-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { runFaultMatrix } from './runner.ts';

/*
 * Submagic (its API reference pages, stored in test/contracts/submagic/): a project made from a
 * video link or from our uploaded bytes is paid work, rendered by Submagic itself (autoRender);
 * adforge never exports, but an export would render again, so the fake's exports past a project's
 * first count as jobs. The project's read says when it ended. Submagic documents no idempotency
 * key (n/a).
 */
const SUBMAGIC_KEY = 'submagic-matrix-key';
const fromLink = (i: MatrixInputs) => ({ path: '/api/v1/videos/edit', body: { template_id: 'bold-pop', video_url: i.clipUrl } });
const fromGeneration = (i: MatrixInputs) => ({ path: '/api/v1/videos/edit', body: { template_id: 'bold-pop', generation_id: i.made.source } });

runFaultMatrix({
  provider: 'submagic',
  async start() {
    const submagic = await startSubmagicFake({ key: SUBMAGIC_KEY, video: await testVideo({ width: 64, height: 36, seconds: 1 }) });
    return {
      target: submagic.url,
      env: (url) => ({ SUBMAGIC_API_KEY: SUBMAGIC_KEY, SUBMAGIC_API_URL: url, ENGINE_ROUTES: 'video-edit=submagic,*=local' }),
      // A project is one paid job; each export after a project's first renders it again.
      billed: () => ({ submagic: [...submagic.projects.values()].reduce((n, p) => n + 1 + Math.max(0, p.exports - 1), 0) }),
      close: () => submagic.close(),
    };
  },
  // A finished video of the team, made once by the built-in renderer: the source of the edits sent as bytes.
  prepare: async (i) => {
    const res = await i.svc.api('POST', '/api/v1/videos/ai-video', { key: i.key, body: { model: 'veo-3.1', prompt: 'a source clip', aspect_ratio: '16:9', duration: 4 } });
    const id = String(res.body.generation_id);
    for (let n = 0; ; n++) {
      const g = await i.svc.api('GET', `/api/v1/generations/${id}`, { key: i.key });
      if (g.body.status === 'completed') return { source: id };
      if (g.body.status === 'failed' || n > 600) throw new Error(`the source video did not complete: ${g.text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  },
  calls: [
    { name: 'POST /v1/projects (submit, video link)', method: 'POST', path: /^\/v1\/projects$/, create: fromLink },
    { name: 'POST /v1/projects/upload (submit, our bytes)', method: 'POST', path: /^\/v1\/projects\/upload$/, create: fromGeneration },
    { name: 'GET /v1/projects/{id} (read)', method: 'GET', path: /^\/v1\/projects\/[^/]+$/, create: fromLink },
  ],
  // Submagic's {error, message}; its 429 names the wait in the body, retryAfter in seconds (get-project's error responses).
  errorAnswer: (status, retryAfterSeconds) => ({
    status,
    body: { error: status === 429 ? 'RATE_LIMIT_EXCEEDED' : status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'REQUEST_FAILED', message: `the matrix answered ${status}`, ...(retryAfterSeconds ? { retryAfter: retryAfterSeconds } : {}) },
  }),
});
