import { startComfyFake } from '../support/comfyui-fake.ts';
import { pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { runFaultMatrix } from './runner.ts';

/*
 * The operator's ComfyUI (its server.py, execution.py and jobs API, stored in
 * test/contracts/comfyui/), a current build: a prompt queued is GPU time spent; its job read says
 * whether it waits, runs or ended. The prompt id is ours, so a resend is refused by ComfyUI rather
 * than run twice; ComfyUI has no "still in progress" answer (n/a).
 */
const textToImage = (_: MatrixInputs) => ({ path: '/api/v1/images/text-to-image', body: { model: 'fast', prompt: 'a red mug', aspect_ratio: '1:1' } });

runFaultMatrix({
  provider: 'comfyui',
  async start() {
    const comfy = await startComfyFake({ png: await pngBytes(32, 32), mp4: await testVideo({ width: 64, height: 36, seconds: 1 }), steps: 2, stepMs: 5 });
    return {
      target: comfy.url,
      env: (url) => ({ COMFYUI_URL: url, ENGINE_ROUTES: 'text-to-image=comfyui,*=local' }),
      // Each prompt id ComfyUI queued: GPU time (a repeat of one id is refused, not run).
      billed: () => ({ comfyui: new Set(comfy.posts.map((p) => p.promptId)).size }),
      busy: () => comfy.load() > 0,
      close: () => comfy.close(),
    };
  },
  freshWorkerPerCell: true,
  calls: [
    { name: 'POST /prompt (submit)', method: 'POST', path: /^\/prompt$/, create: textToImage },
    // The first read of a prompt is made before it is queued, on every server (the prompt id is ours: a lost submit is looked for, not sent again).
    { name: 'GET /api/jobs/{id} (the look before the submit)', method: 'GET', path: /^\/api\/jobs\/[^/]+$/, create: textToImage },
    { name: 'GET /api/jobs/{id} (read)', method: 'GET', path: /^\/api\/jobs\/[^/]+$/, skip: 1, create: textToImage },
  ],
  errorAnswer: (status) => ({ status, body: { error: { type: 'server_error', message: `the matrix answered ${status}`, details: '', extra_info: {} }, node_errors: {} } }),
});
