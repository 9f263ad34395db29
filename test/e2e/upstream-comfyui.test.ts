import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { imageInfo, testVideo } from '../support/media-probe.ts';
import { startComfyFake, type ComfyFake } from '../support/comfyui-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { waitUntil } from '../support/cli-run.ts';

// Generations through the real worker with ENGINE_ROUTES sending images and videos to a (fake) ComfyUI.
let comfy: ComfyFake;
let png: Buffer;
let ref: Buffer;
let host: Awaited<ReturnType<typeof startImageHost>>;
let video: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  png = await pngBytes(64, 64, '#2a7bd0');
  video = await testVideo({ width: 160, height: 96, seconds: 1, audio: false });
  ref = await pngBytes(40, 40, '#d04020');
  host = await startImageHost({ '/ref.png': sendBytes(ref, 'image/png') });
  comfy = await startComfyFake({ png, mp4: video, steps: 3, stepMs: 20 });
  svc = await startTestService(
    { COMFYUI_URL: comfy.url, ENGINE_ROUTES: 'text-to-image=comfyui,image-edit=comfyui,product-shots=comfyui,ai-video=comfyui,*=local', UPSTREAM_POLL_MS: '40' },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await comfy?.close();
  await host?.close();
});

const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const post = (path: string, body: Record<string, unknown>) => svc.api('POST', `/api/v1${path}`, { key: t.key, body });
const jobOf = async (generationId: string) => svc.app.db.selectFrom('upstream_jobs').select(['provider', 'provider_job_id']).where('generation_id', '=', generationId).executeTakeFirstOrThrow();

describe('generations on ComfyUI', () => {
  it('text-to-image: queued under our prompt_id, the PNG stored as ours', async () => {
    const res = await post('/images/text-to-image', { model: 'fast', prompt: 'a red sneaker on white', aspect_ratio: '1:1' });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status, g.error).toBe('completed');
    expect((await svc.fetchUrl(g.result_urls[0])).bytes.equals(png)).toBe(true);
    const job = await jobOf(res.body.generation_id);
    expect(job.provider).toBe('comfyui');
    expect(comfy.jobs.get(job.provider_job_id!)?.graph['6']?.inputs).toMatchObject({ text: expect.stringContaining('a red sneaker on white') });
  });

  it('image-edit through GraphQL: the reference image uploaded to ComfyUI and named in LoadImage', async () => {
    const client = await graphqlClient(svc);
    const input = { model: 'fast', prompt: 'make it blue', aspect_ratio: '1:1', reference_image_urls: [host.url('/ref.png')] };
    const query = 'mutation ($input: ImageEditInput!) { createImageEdit(input: $input) { ... on MutationCreateImageEditSuccess { data { generation_id type } } ... on AppError { code message } } }';
    const created = await client.gql(query, { input }, t.key).finally(() => client.close());
    expect(created.body.data?.createImageEdit?.data, JSON.stringify(created.body)).toMatchObject({ type: 'edit' });
    const id = created.body.data.createImageEdit.data.generation_id as string;
    expect((await waitForGeneration(svc, t.key, id)).status).toBe('completed');
    const graph = comfy.jobs.get((await jobOf(id)).provider_job_id!)!.graph;
    // Re-encoded as PNG before it reaches the GPU server: the same picture, not the bytes the URL served.
    const sent = comfy.received.find((u) => u.type === 'input' && u.path === graph['10']!.inputs!.image)!;
    expect(await imageInfo(sent.bytes)).toMatchObject({ format: 'png', width: 40, height: 40 });
  });

  it("product shots: the product's image restaged by the style's prompt", async () => {
    const product = await post('/products', { name: 'Mug', description: 'Stoneware', category: 'home', image_url: host.url('/ref.png') });
    expect(product.status).toBe(201);
    const res = await post('/images/product-shots', { product_id: product.body.id, style_id: 'studio-white', model: 'fast', aspect_ratio: '4:5' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status, g.error).toBe('completed');
    expect((await svc.fetchUrl(g.result_urls[0])).bytes.equals(png)).toBe(true);
    const graph = comfy.jobs.get((await jobOf(res.body.generation_id)).provider_job_id!)!.graph;
    expect(graph['11']!.inputs).toMatchObject({ width: 816, height: 1024 });
    expect(comfy.received.find((u) => u.type === 'input' && u.path === graph['10']!.inputs!.image)?.bytes.length).toBeGreaterThan(0);
  });

  it('ai-video: the MP4 is stored as ours', async () => {
    const res = await post('/videos/ai-video', { model: 'kling-2.6', prompt: 'a sneaker turning slowly', aspect_ratio: '16:9', duration: 5 });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status, g.error).toBe('completed');
    expect((await svc.fetchUrl(g.result_url)).bytes.equals(video)).toBe(true);
    const job = await jobOf(res.body.generation_id);
    expect(comfy.jobs.get(job.provider_job_id!)?.graph['40']?.inputs).toMatchObject({ width: 832, length: 81 });
  });

  it("an execution_error fails the generation with the node's message and refunds it", async () => {
    const before = await used();
    comfy.failNext('Allocation on device 0 would exceed allowed memory', 'VAEDecode');
    const res = await post('/images/text-to-image', { model: 'fast', prompt: 'too big', aspect_ratio: '1:1' });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect([g.status, g.error]).toEqual(['failed', 'ComfyUI node 8 (VAEDecode) failed: Allocation on device 0 would exceed allowed memory']);
    expect(await used()).toBe(before);
  });

  it('a cancel removes the queued prompt from ComfyUI and refunds at once', async () => {
    const before = await used();
    comfy.hold();
    try {
      const res = await post('/images/text-to-image', { model: 'fast', prompt: 'never drawn', aspect_ratio: '1:1' });
      const id = res.body.generation_id as string;
      await waitUntil(async () => (await svc.app.db.selectFrom('upstream_jobs').select('state').where('generation_id', '=', id).executeTakeFirst())?.state === 'submitted', 20_000, 'the submit');
      const { provider_job_id: promptId } = await jobOf(id);
      expect(comfy.jobs.get(promptId!)?.state).toBe('pending');
      expect((await svc.api('POST', `/api/v1/generations/${id}/cancel`, { key: t.key })).body).toMatchObject({ status: 'failed', error: 'cancelled' });
      expect(await used()).toBe(before);
      await waitUntil(async () => !comfy.jobs.has(promptId!), 20_000, 'the prompt deleted from the queue');
    } finally {
      comfy.release();
    }
  });

  it('once a generation ends, ComfyUI keeps neither its prompt nor its pictures: the history entry is deleted, the input and output files emptied', async () => {
    const res = await post('/images/edit', { model: 'fast', prompt: 'make it green', aspect_ratio: '1:1', reference_image_urls: [host.url('/ref.png')] });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = res.body.generation_id as string;
    expect((await waitForGeneration(svc, t.key, id)).status).toBe('completed');
    const { provider_job_id: promptId } = await jobOf(id);
    const graph = comfy.jobs.get(promptId!)!.graph;
    await waitUntil(async () => !comfy.history.has(promptId!), 20_000, 'the history entry deleted');
    expect(comfy.uploads.get(String(graph['10']!.inputs!.image))?.length).toBe(0);
    const outputs = [...comfy.files.entries()].filter(([name]) => name.startsWith('adforge/image-edit_'));
    expect(outputs.length).toBeGreaterThan(0);
    expect(outputs.every(([, bytes]) => bytes.length === 0)).toBe(true);
    // The generation's own copy is untouched.
    const g = await waitForGeneration(svc, t.key, id);
    expect((await svc.fetchUrl(g.result_urls[0])).bytes.equals(png)).toBe(true);
  });

  it('a failed generation keeps the node and its first line, never the server\'s paths or its traceback', async () => {
    comfy.failNext("[Errno 2] No such file or directory: '/opt/ComfyUI/models/checkpoints/sd_xl_base_1.0.safetensors'\n\nTIPS: check the file", 'CheckpointLoaderSimple', 'FileNotFoundError');
    const res = await post('/images/text-to-image', { model: 'fast', prompt: 'no model', aspect_ratio: '1:1' });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect([g.status, g.error]).toEqual(['failed', "ComfyUI node 4 (CheckpointLoaderSimple) failed: [Errno 2] No such file or directory: 'sd_xl_base_1.0.safetensors'"]);
  });

  it('nothing adforge sent broke the stored contract', () => {
    expect(comfy.problems).toEqual([]);
  });
});
