import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createComfyUiEngine } from '../../src/adapters/engines/comfyui/comfyui-engine.ts';
import { comfyuiProvider } from '../../src/adapters/engines/comfyui/provider.ts';
import { SHIPPED_WORKFLOWS } from '../../src/adapters/engines/comfyui/workflows.ts';
import { type Engine, type UpstreamRequest, type UpstreamStatus } from '../../src/adapters/engines/engine-contract.ts';
import { startComfyFake, type ComfyFake } from '../support/comfyui-fake.ts';
import { imageInfo, makeMedia, testVideo, videoInfo } from '../support/media-probe.ts';
import { memoryFile } from '../support/upstream-file.ts';

// The comfyui adapter against a fake ComfyUI held to test/contracts/comfyui/ (two servers, for the choice between them).
let png: Buffer;
let mp4: Buffer;
let a: ComfyFake;
let b: ComfyFake;
const engines: Engine[] = [];
const signal = new AbortController().signal;

beforeAll(async () => {
  png = await makeMedia(['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=1', '-frames:v', '1'], 'png');
  mp4 = await testVideo({ width: 160, height: 96, seconds: 1, audio: false });
  a = await startComfyFake({ png, mp4 });
  b = await startComfyFake({ png, mp4 });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});
afterEach(() => {
  for (const f of [a, b]) {
    f.up();
    f.release();
    expect(f.problems).toEqual([]);
  }
});

const engine = (urls: string[]) => {
  const e = createComfyUiEngine({ urls, workflowsDir: SHIPPED_WORKFLOWS, routeKeys: ['text-to-image', 'image-edit', 'product-shots', 'ai-video'], allowPrivate: true, timeoutMs: 5000 });
  engines.push(e);
  return e;
};
const file = (bytes: Buffer, mime: string) => memoryFile(bytes, mime, 'https://example.com/x');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'adforge-comfy-engine-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
/** A copy of the shipped workflows folder with the text-to-image graph changed by `edit` (an operator's own export). */
function workflowsWith(edit: (g: Record<string, { class_type: string; inputs: Record<string, unknown> }>) => void): string {
  const dir = fs.mkdtempSync(path.join(tmp, 'wf-'));
  for (const f of fs.readdirSync(SHIPPED_WORKFLOWS)) fs.copyFileSync(path.join(SHIPPED_WORKFLOWS, f), path.join(dir, f));
  const g = JSON.parse(fs.readFileSync(path.join(dir, 'text-to-image.json'), 'utf8'));
  edit(g);
  fs.writeFileSync(path.join(dir, 'text-to-image.json'), JSON.stringify(g));
  return dir;
}
/** The log lines an engine wrote. */
function memoryLog() {
  const lines: Array<{ obj: object; msg: string }> = [];
  return { lines, warn: (obj: object, msg: string) => void lines.push({ obj, msg }) };
}
const request = (operation: UpstreamRequest['operation'], params: Record<string, unknown>, extra: Partial<UpstreamRequest['inputs']> = {}): UpstreamRequest => ({
  generationId: randomUUID(),
  operation,
  params,
  inputs: { prompt: 'a red sneaker on white', references: [], brandImages: [], productImages: [], ...extra },
});
async function until(e: Engine, handle: Record<string, unknown>, stop: (s: UpstreamStatus) => boolean = (s) => s.state !== 'pending'): Promise<UpstreamStatus> {
  for (let i = 0; i < 400; i++) {
    const s = await e.poll(handle, signal);
    if (stop(s)) return s;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the job never ended');
}
const bytesOf = async (s: UpstreamStatus) => {
  if (s.state !== 'succeeded') throw new Error(`not succeeded: ${JSON.stringify(s)}`);
  return Promise.all(s.outputs.map(async (o) => ('open' in o ? buffer(await o.open(signal)) : Promise.reject(new Error('not a stream')))));
};

describe('comfyui engine against a fake ComfyUI', () => {
  it('text-to-image: our prompt_id, the prompt, size and batch in the mapped inputs; the PNGs come back through /view', async () => {
    const e = engine([a.url]);
    const id = randomUUID();
    const sub = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '16:9', resolution: '1k', quantity: 2 }), { id }, signal);
    expect(sub.providerJobId).toBe(id);
    expect(sub.handle).toMatchObject({ server: a.url, promptId: id });
    const graph = a.jobs.get(id)!.graph;
    expect(graph['6']!.inputs).toMatchObject({ text: 'a red sneaker on white' });
    expect(graph['5']!.inputs).toMatchObject({ width: 1024, height: 576, batch_size: 2 });
    const done = await until(e, sub.handle);
    const out = await bytesOf(done);
    expect(out).toHaveLength(2);
    expect(out[0]!.equals(png)).toBe(true);
    expect((await imageInfo(out[0]!)).width).toBe(64);
  });

  it('reports the queue position while waiting, and the running step from the WebSocket', async () => {
    const e = engine([a.url]);
    a.hold();
    a.occupy(1);
    const id = randomUUID();
    const sub = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id }, signal);
    const queued = await e.poll(sub.handle, signal);
    expect(queued).toMatchObject({ state: 'pending', progress: { stage: 'queued at position 2' } });
    a.release();
    const running = await until(e, sub.handle, (s) => s.state !== 'pending' || /running step/.test(s.state === 'pending' ? (s.progress?.stage ?? '') : ''));
    expect(running.state).toBe('pending');
    if (running.state === 'pending') expect(running.progress).toMatchObject({ stage: expect.stringMatching(/^running step \d of 3$/), fraction: expect.any(Number) });
    expect((await until(e, sub.handle)).state).toBe('succeeded');
  });

  it('a worker process that did not send the job sees its running steps too (queued without a client_id, its progress reaches every socket)', async () => {
    const slow = await startComfyFake({ png, mp4, steps: 40, stepMs: 50 });
    try {
      const sender = engine([slow.url]);
      const poller = engine([slow.url]); // another worker process: its own watcher, its own socket
      const sub = await sender.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
      const s = await until(poller, sub.handle, (x) => x.state !== 'pending' || /running step/.test(x.state === 'pending' ? (x.progress?.stage ?? '') : ''));
      expect(s).toMatchObject({ state: 'pending', progress: { stage: expect.stringMatching(/^running step \d+ of 40$/), fraction: expect.any(Number) } });
      expect((await until(poller, sub.handle)).state).toBe('succeeded');
      expect(slow.problems).toEqual([]);
    } finally {
      await slow.close();
    }
  });

  it('the WebSocket reconnects after the server drops it, and the steps are seen again', async () => {
    const slow = await startComfyFake({ png, mp4, steps: 40, stepMs: 50 });
    try {
      const e = engine([slow.url]);
      slow.hold();
      const sub = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
      slow.goDown(); // every socket cut
      slow.up();
      await new Promise((r) => setTimeout(r, 3500)); // the watch waits 3 s before it reconnects
      slow.release();
      const s = await until(e, sub.handle, (x) => x.state !== 'pending' || /running step/.test(x.state === 'pending' ? (x.progress?.stage ?? '') : ''));
      expect(s).toMatchObject({ state: 'pending', progress: { stage: expect.stringMatching(/^running step \d+ of 40$/) } });
      expect(slow.problems).toEqual([]);
    } finally {
      await slow.close();
    }
  });

  it('image-edit: the input image is uploaded and its name put into LoadImage', async () => {
    const e = engine([a.url]);
    const id = randomUUID();
    expect(e.refuse('image-edit', { model: 'fast', reference_image_urls: [] }, 0)).toMatch(/takes 1 input image\(s\); the request brings 0/);
    expect(e.refuse('image-edit', { model: 'fast', reference_image_urls: ['https://example.com/a.png'] }, 0)).toBeUndefined();
    expect(e.refuse('product-shots', { model: 'fast', product_id: 'p' }, 0)).toBeUndefined();
    const sub = await e.submit(request('image-edit', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }, { references: [file(png, 'image/png')] }), { id }, signal);
    const name = String(a.jobs.get(id)!.graph['10']!.inputs!.image);
    expect(name).toBe(`adforge/${id}-1.png`);
    expect(await imageInfo(a.uploads.get(name)!)).toMatchObject({ width: 64, height: 64 });
    expect((await until(e, sub.handle)).state).toBe('succeeded');
  });

  it('ai-video: frames and rate from the duration (Wan: 4n+1 at 16 fps); the MP4 comes back', async () => {
    const e = engine([a.url]);
    const id = randomUUID();
    expect(e.refuse('ai-video', { model: 'veo-3.1', first_frame_image_url: 'https://example.com/f.png' }, 0)).toBe('the ComfyUI workflow for ai-video takes 0 input image(s); the request brings 1 (frames or reference images)');
    expect(e.refuse('ai-video', { model: 'veo-3.1', reference_image_urls: [] }, 0)).toBeUndefined();
    const sub = await e.submit(request('ai-video', { model: 'veo-3.1', aspect_ratio: '16:9', resolution: '720p', duration: 4 }), { id }, signal);
    const graph = a.jobs.get(id)!.graph;
    expect(graph['40']!.inputs).toMatchObject({ width: 832, height: 464, length: 65 });
    expect(graph['50']!.inputs).toMatchObject({ fps: 16 });
    const [video] = await bytesOf(await until(e, sub.handle));
    expect((await videoInfo(video!)).videoCodec).toBe('h264');
  });

  it("an execution_error fails the job with the node's own message", async () => {
    const e = engine([a.url]);
    a.failNext('CUDA out of memory. Tried to allocate 2.00 GiB', 'KSampler');
    const sub = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
    const s = await until(e, sub.handle);
    expect(s).toEqual({ state: 'failed', message: 'ComfyUI node 3 (KSampler) failed: CUDA out of memory. Tried to allocate 2.00 GiB' });
  });

  it('cancel deletes a queued prompt, and interrupts a running one', async () => {
    const e = engine([a.url]);
    a.hold();
    const queued = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
    await e.cancel!(queued.handle, signal);
    expect(a.jobs.has(String(queued.handle.promptId))).toBe(false);
    a.release();

    const slow = await startComfyFake({ png, mp4, steps: 50, stepMs: 40 });
    try {
      const e2 = engine([slow.url]);
      const running = await e2.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
      await until(e2, running.handle, (s) => s.state === 'pending' && s.progress?.stage !== 'queued at position 1');
      await e2.cancel!(running.handle, signal);
      expect(await until(e2, running.handle)).toEqual({ state: 'failed', message: 'ComfyUI interrupted the workflow' });
      expect(slow.problems).toEqual([]);
    } finally {
      await slow.close();
    }
  });

  it('a submit whose answer was lost is sent again safely: one prompt on the server', async () => {
    const e = engine([a.url, b.url]);
    const id = randomUUID();
    const req = request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 });
    a.loseNextAnswer();
    b.loseNextAnswer();
    // The lost answer: the prompt is looked for on every server, found, and taken as queued.
    const first = await e.submit(req, { id }, signal);
    expect(first.providerJobId).toBe(id);
    // A worker that died before recording the submit sends it again: found, never queued twice.
    const again = await e.submit(req, { id }, signal);
    expect(again.providerJobId).toBe(id);
    expect([...a.posts, ...b.posts].filter((p) => p.promptId === id)).toHaveLength(1);
    expect((await until(e, again.handle)).state).toBe('succeeded');
  });

  it('each job goes to the least loaded server; a server that is down is skipped', async () => {
    const e = engine([a.url, b.url]);
    a.hold();
    a.occupy(2);
    const one = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
    expect(one.handle.server).toBe(b.url);
    a.release();
    await until(e, one.handle);
    b.goDown();
    const two = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
    expect(two.handle.server).toBe(a.url);
    a.goDown();
    const none = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal).catch((err: unknown) => err);
    expect(none).toMatchObject({ failure: 'transient', message: expect.stringMatching(/no ComfyUI server answered/) });
    a.up();
    b.up();
    expect((await until(e, two.handle)).state).toBe('succeeded');
  });
});

describe('comfyui engine: a prompt_id a server already holds', () => {
  it('another process sending the same attempt finds the prompt and posts nothing', async () => {
    const e = engine([a.url]);
    const id = randomUUID();
    a.hold();
    const req = request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 });
    await e.submit(req, { id }, signal);
    const raced = createComfyUiEngine({ urls: [a.url], workflowsDir: SHIPPED_WORKFLOWS, routeKeys: ['text-to-image'], allowPrivate: true, watchProgress: false });
    const seen = a.posts.length;
    a.release();
    const again = await raced.submit(req, { id }, signal);
    expect(again).toMatchObject({ providerJobId: id, handle: { server: a.url } });
    expect(a.posts.length).toBe(seen);
  });
});

describe('comfyui engine: adforge providers check', () => {
  it("names each routed workflow's model files and finds them in every answering server's models/ folders", async () => {
    const full = { checkpoints: ['sd_xl_base_1.0.safetensors'], diffusion_models: ['wan2.1_t2v_1.3B_fp16.safetensors'], text_encoders: ['umt5_xxl_fp8_e4m3fn_scaled.safetensors'], vae: ['wan_2.1_vae.safetensors'] };
    const good = await startComfyFake({ png, mp4, models: full });
    const partial = await startComfyFake({ png, mp4, models: { ...full, vae: [] } });
    try {
      const e = engine([good.url, partial.url]);
      expect(e.targets!('text-to-image')).toEqual(['checkpoints/sd_xl_base_1.0.safetensors']);
      const targets = e.targets!('ai-video');
      expect(targets).toEqual(['diffusion_models/wan2.1_t2v_1.3B_fp16.safetensors', 'text_encoders/umt5_xxl_fp8_e4m3fn_scaled.safetensors', 'vae/wan_2.1_vae.safetensors']);
      expect(await e.check!(targets, signal)).toEqual([
        { target: 'key', outcome: 'ok', detail: '2 of 2 ComfyUI servers answer GET /prompt' },
        { target: targets[0], outcome: 'ok', detail: 'in models/diffusion_models on every server that answers' },
        { target: targets[1], outcome: 'ok', detail: 'in models/text_encoders on every server that answers' },
        { target: targets[2], outcome: 'model_gone', detail: `not in models/vae on ${partial.url} (GET /models/vae)` },
      ]);
      partial.goDown();
      good.goDown();
      expect((await e.check!(targets.slice(0, 1), signal))[0]).toMatchObject({ outcome: 'unreachable' });
      expect([good.problems, partial.problems]).toEqual([[], []]);
    } finally {
      await Promise.all([good.close(), partial.close()]);
    }
  });
});

describe('comfyui provider module', () => {
  it('reaches the COMFYUI_URL servers on a private address with ALLOW_PRIVATE_NETWORK_URLS off (operator configuration, never a request)', async () => {
    const settings = comfyuiProvider.settings(z.object(comfyuiProvider.env).parse({ COMFYUI_URL: a.url, ENGINE_ROUTES: 'text-to-image=comfyui' }) as never);
    const e = await comfyuiProvider.create(settings, { allowPrivate: false });
    const sub = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
    expect((await until(e, sub.handle)).state).toBe('succeeded');
  });
});

describe('comfyui engine: reads that stay small whatever the queue holds (defect 12)', () => {
  it("with eighty browser-queued prompts (300 KB of page workflow each, 24 MB of GET /queue), a job is placed and polled without reading the queue", async () => {
    const busy = await startComfyFake({ png, mp4 });
    try {
      busy.hold();
      busy.occupy(80, 300_000);
      const e = engine([busy.url, a.url]);
      a.hold();
      a.occupy(100, 1_000);
      const sub = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
      expect(sub.handle.server).toBe(busy.url); // 80 queued there, 100 on the other
      expect(await e.poll(sub.handle, signal)).toMatchObject({ state: 'pending', progress: { stage: 'queued at position 81' } });
      const read = [...busy.served.values()].reduce((n, b) => n + b, 0);
      expect(busy.served.get('GET /queue') ?? 0).toBe(0);
      expect(read).toBeLessThan(64 * 1024);
      expect(busy.problems).toEqual([]);
    } finally {
      a.release();
      await busy.close();
    }
  });
});

describe('comfyui engine: a build without the jobs API (0.3.64)', () => {
  it('a poll reads the history and the queue length, never the queue; a restarted server is seen as such', async () => {
    const old = await startComfyFake({ png, mp4, build: '0.3.64' });
    try {
      old.hold();
      old.occupy(3, 300_000);
      const e = engine([old.url]);
      const sub = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
      const queueRead = old.served.get('GET /queue') ?? 0;
      expect(await e.poll(sub.handle, signal)).toMatchObject({ state: 'pending', progress: { stage: 'waiting: 4 prompt(s) queued or running on the server' } });
      expect(old.served.get('GET /queue') ?? 0).toBe(queueRead);
      old.restart();
      expect(await e.poll(sub.handle, signal)).toMatchObject({ state: 'failed', message: expect.stringMatching(/no longer knows the job \(it was restarted/) });
      expect(old.problems).toEqual([]);
    } finally {
      await old.close();
    }
  });
});

describe('comfyui engine: a prompt ComfyUI queued with some outputs dropped (defect 11)', () => {
  const image = () => request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 });

  it('another output of the workflow fails validation: ComfyUI runs ours, and adforge takes it', async () => {
    const dir = workflowsWith((g) => {
      g['30'] = { class_type: 'LoadImage', inputs: { image: 'adforge/never-uploaded.png' } };
      g['31'] = { class_type: 'PreviewImage', inputs: { images: ['30', 0] } };
    });
    const e = createComfyUiEngine({ urls: [a.url], workflowsDir: dir, routeKeys: ['text-to-image'], allowPrivate: true, watchProgress: false });
    const id = randomUUID();
    const sub = await e.submit(image(), { id }, signal);
    expect(sub.providerJobId).toBe(id);
    expect(a.jobs.get(id)!.outputs).toEqual(['9']);
    expect((await until(e, sub.handle)).state).toBe('succeeded');
  });

  it("the workflow's own output fails while another passes: ComfyUI started the prompt; it is interrupted there and refused", async () => {
    const dir = workflowsWith((g) => {
      g['3']!.inputs.sampler_name = 'dpmpp_9m';
      g['30'] = { class_type: 'LoadImage', inputs: { image: 'example.png' } };
      g['31'] = { class_type: 'PreviewImage', inputs: { images: ['30', 0] } };
    });
    const e = createComfyUiEngine({ urls: [a.url], workflowsDir: dir, routeKeys: ['text-to-image'], allowPrivate: true, watchProgress: false });
    a.pauseAtStart();
    const id = randomUUID();
    const err = await e.submit(image(), { id }, signal).catch((x: unknown) => x);
    expect(err).toMatchObject({ failure: 'refused', message: 'ComfyUI refused the workflow: node 3 (KSampler): Value not in list (sampler_name)' });
    a.release();
    await new Promise((r) => setTimeout(r, 200));
    expect(a.interrupted).toContain(id);
    expect(a.temp.size).toBe(0);
    expect(a.history.has(id)).toBe(false);
  });
});

describe('comfyui engine: cancel ends a running prompt on every build, and never another', () => {
  for (const build of ['current', '0.3.64', '0.3.50'] as const) {
    it(`ComfyUI ${build}`, async () => {
      const f = await startComfyFake({ png, mp4, build });
      try {
        const e = engine([f.url]);
        f.pauseAtStart();
        const running = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
        const queued = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
        await e.cancel!(queued.handle, signal);
        expect(f.jobs.has(String(queued.handle.promptId))).toBe(false);
        expect(f.interrupted).toEqual([]);
        await e.cancel!(running.handle, signal);
        f.release();
        expect(await until(e, running.handle)).toEqual({ state: 'failed', message: 'ComfyUI interrupted the workflow' });
        expect(f.interrupted).toEqual([running.handle.promptId]);
        expect(f.problems).toEqual([]);
      } finally {
        await f.close();
      }
    });
  }
});

describe('comfyui engine: inputs checked and re-encoded, copies removed, words kept short (defect 13)', () => {
  it("an input image is decoded and sent as PNG, whatever its host called it; bytes that are no image are refused before ComfyUI is asked", async () => {
    const jpeg = await makeMedia(['-f', 'lavfi', '-i', 'testsrc=size=48x32:rate=1', '-frames:v', '1'], 'jpg');
    const e = engine([a.url]);
    const id = randomUUID();
    const sub = await e.submit(request('image-edit', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }, { references: [file(jpeg, 'image/png')] }), { id }, signal);
    expect((await until(e, sub.handle)).state).toBe('succeeded');
    const sent = a.uploads.get(String(a.jobs.get(id)!.graph['10']!.inputs!.image))!;
    expect(sent.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(await imageInfo(sent)).toMatchObject({ width: 48, height: 32 });
    const before = a.posts.length;
    const uploads = a.uploads.size;
    const refused = await e.submit(request('image-edit', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }, { references: [file(Buffer.from('<html>not an image</html>'), 'image/png')] }), { id: randomUUID() }, signal).catch((x: unknown) => x);
    expect(refused).toMatchObject({ failure: 'refused', message: 'an input image could not be read as an image' });
    expect([a.posts.length, a.uploads.size]).toEqual([before, uploads]);
  });

  it("a node's failure reads as one short line; the traceback, the server's paths and its tips go to the log", async () => {
    const log = memoryLog();
    const e = createComfyUiEngine({ urls: [a.url], workflowsDir: SHIPPED_WORKFLOWS, routeKeys: ['text-to-image'], allowPrivate: true, watchProgress: false, log });
    a.failNext("[Errno 2] No such file or directory: '/opt/ComfyUI/models/vae/sdxl_vae.safetensors'\n\nTIPS: If the workflow worked before you might have accidentally set the batch_size to a large number.", 'VAEDecode', 'FileNotFoundError');
    const sub = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal);
    expect(await until(e, sub.handle)).toEqual({ state: 'failed', message: "ComfyUI node 8 (VAEDecode) failed: [Errno 2] No such file or directory: 'sdxl_vae.safetensors'" });
    expect(JSON.stringify(log.lines)).toContain('/opt/ComfyUI/nodes.py');
    expect(JSON.stringify(log.lines)).toContain('TIPS');
  });

  it("a refused workflow names the node and the input, not the server's list of model files", async () => {
    const log = memoryLog();
    const dir = workflowsWith((g) => (g['4']!.inputs.ckpt_name = 'flux1-dev.safetensors'));
    const e = createComfyUiEngine({ urls: [a.url], workflowsDir: dir, routeKeys: ['text-to-image'], allowPrivate: true, watchProgress: false, log });
    const err = await e.submit(request('text-to-image', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }), { id: randomUUID() }, signal).catch((x: unknown) => x);
    expect(err).toMatchObject({ failure: 'refused', message: 'ComfyUI refused the request: Prompt outputs failed validation; node 4 (CheckpointLoaderSimple): Value not in list (ckpt_name)' });
    expect(JSON.stringify(log.lines)).toContain("sd_xl_base_1.0.safetensors");
  });

  it('release() empties the uploaded input and the output files on ComfyUI and deletes the prompt from its history', async () => {
    const e = engine([a.url]);
    const id = randomUUID();
    const sub = await e.submit(request('image-edit', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 2 }, { references: [file(png, 'image/png')] }), { id }, signal);
    const input = String(a.jobs.get(id)!.graph['10']!.inputs!.image);
    expect(input).toBe(`adforge/${id}-1.png`);
    const done = await until(e, sub.handle);
    expect(await bytesOf(done)).toHaveLength(2);
    const outputs = ((a.history.get(id)!.outputs as Record<string, { images: Array<{ filename: string; subfolder: string }> }>)['9']!.images).map((f) => `${f.subfolder}/${f.filename}`);
    expect(outputs).toEqual([expect.stringMatching(/^adforge\/image-edit_\d{5}_\.png$/), expect.stringMatching(/^adforge\/image-edit_\d{5}_\.png$/)]);
    await e.release!(sub.handle, signal);
    expect(a.uploads.get(input)?.length).toBe(0);
    for (const f of outputs) expect(a.files.get(f)?.length, f).toBe(0);
    expect(a.history.has(id)).toBe(false);
    expect(a.problems).toEqual([]);
  });

  it('release() of a prompt still queued ends it first, then removes what it left', async () => {
    const e = engine([a.url]);
    a.hold();
    const id = randomUUID();
    const sub = await e.submit(request('image-edit', { model: 'fast', aspect_ratio: '1:1', resolution: '1k', quantity: 1 }, { references: [file(png, 'image/png')] }), { id }, signal);
    await e.release!(sub.handle, signal);
    expect(a.jobs.has(id)).toBe(false);
    expect(a.uploads.get(`adforge/${id}-1.png`)?.length).toBe(0);
    expect(a.problems).toEqual([]);
  });
});
