import { startComfyFake } from '../support/comfyui-fake.ts';
import { pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { runFaultMatrix } from './runner.ts';

/*
 * The operator's ComfyUI (its server.py and execution.py, stored in test/contracts/comfyui/): a
 * prompt queued is GPU time spent; its history says when it ended, its queue whether it waits or
 * runs. The prompt id is ours, so a resend is refused by ComfyUI rather than run twice; ComfyUI has
 * no "still in progress" answer (n/a). Its errors are its own {error, node_errors} or plain text.
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
  calls: [
    { name: 'POST /prompt (submit)', method: 'POST', path: /^\/prompt$/, create: textToImage },
    { name: 'GET /history/{id} (read)', method: 'GET', path: /^\/history\/[^/]+$/, create: textToImage },
    { name: 'GET /queue (read)', method: 'GET', path: /^\/queue$/, create: textToImage },
  ],
  errorAnswer: (status) => ({ status, body: { error: { type: 'server_error', message: `the matrix answered ${status}`, details: '', extra_info: {} }, node_errors: {} } }),
});
