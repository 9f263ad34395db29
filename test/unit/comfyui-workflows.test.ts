import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildEngines } from '../../src/adapters/engines/from-config.ts';
import { comfyRouteKeys } from '../../src/adapters/engines/comfyui/provider.ts';
import { comfyMessage, historyFailure, leastLoaded, outputFiles, queueState } from '../../src/adapters/engines/comfyui/comfyui-engine.ts';
import { SHIPPED_WORKFLOWS, fillGraph, frameCount, frameSize, loadWorkflow, workflowKeys } from '../../src/adapters/engines/comfyui/workflows.ts';
import { loadConfig } from '../../src/config.ts';
import { validateGraph } from '../support/comfyui-fake.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'adforge-comfy-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A folder with the shipped text-to-image workflow, its mapping changed by `edit`. */
function folderWith(edit: (m: Record<string, any>, g: Record<string, any>) => void, key = 'text-to-image'): string {
  const dir = fs.mkdtempSync(path.join(tmp, 'wf-'));
  const m = JSON.parse(fs.readFileSync(path.join(SHIPPED_WORKFLOWS, 'text-to-image.mapping.json'), 'utf8'));
  const g = JSON.parse(fs.readFileSync(path.join(SHIPPED_WORKFLOWS, 'text-to-image.json'), 'utf8'));
  edit(m, g);
  fs.writeFileSync(path.join(dir, `${key}.mapping.json`), JSON.stringify(m));
  if (g) fs.writeFileSync(path.join(dir, `${key}.json`), JSON.stringify(g));
  return dir;
}
const start = async (env: Record<string, string>) => buildEngines(loadConfig({ DATA_DIR: '/tmp/x', COMFYUI_URL: 'http://127.0.0.1:8188', ...env }));

describe('ComfyUI workflows as templates', () => {
  it('every shipped workflow, filled for a request, passes the fake ComfyUI graph checks', () => {
    const keys = workflowKeys(SHIPPED_WORKFLOWS);
    expect(keys).toEqual(['ai-video', 'image-edit', 'product-shots', 'text-to-image']);
    for (const key of keys) {
      const w = loadWorkflow(SHIPPED_WORKFLOWS, key);
      const images = w.mapping.inputs.images.map((_, i) => `adforge/in-${i}.png`);
      const graph = fillGraph(w, { prompt: 'p', params: { aspect_ratio: '9:16', resolution: '1k', quantity: 1, duration: 5 }, seed: 7, images });
      expect(validateGraph(graph, new Set(images)), key).toBeUndefined();
      expect(graph[w.mapping.inputs.prompt.node]!.inputs[w.mapping.inputs.prompt.input], key).toBe('p');
      expect(graph[w.mapping.inputs.seed!.node]!.inputs.seed, key).toBe(7);
    }
  });

  it('the fake refuses what ComfyUI refuses: an unknown node, a missing input, a dangling link, an unknown input file', () => {
    const w = loadWorkflow(SHIPPED_WORKFLOWS, 'image-edit');
    const g = structuredClone(w.graph) as Record<string, any>;
    expect(validateGraph(g)).toMatchObject({ node_errors: { '10': { errors: [{ type: 'custom_validation_failed' }] } } });
    delete g['3'].inputs.cfg;
    g['8'].inputs.samples = ['99', 0];
    expect(validateGraph(g, new Set(['example.png']))).toMatchObject({ node_errors: { '3': { errors: [{ type: 'required_input_missing', details: 'cfg' }] }, '8': { errors: [{ type: 'bad_linked_input' }] } } });
    g['3'].class_type = 'NoSuchNode';
    expect(validateGraph(g)).toMatchObject({ error: { type: 'missing_node_type' } });
  });

  it('sizes follow the aspect ratio and resolution, capped and rounded as the mapping says; frames fit the model', () => {
    const image = loadWorkflow(SHIPPED_WORKFLOWS, 'text-to-image').mapping;
    expect(frameSize(image, { aspect_ratio: '16:9', resolution: '1k' })).toEqual({ width: 1024, height: 576 });
    expect(frameSize(image, { aspect_ratio: '4:5', resolution: '4k' })).toEqual({ width: 1232, height: 1536 });
    const video = loadWorkflow(SHIPPED_WORKFLOWS, 'ai-video').mapping;
    expect(frameSize(video, { aspect_ratio: '9:16', resolution: '480p' })).toEqual({ width: 464, height: 832 });
    expect(frameCount(video.video!, 5)).toBe(81);
    expect(frameCount(video.video!, 1)).toBe(17);
    expect(frameCount(video.video!, 60)).toBe(161);
    expect(frameCount({ fps: 24, frames_multiple_of: 8, frames_plus: 1 }, 4)).toBe(97);
  });

  it('a broken mapping or workflow stops the start, naming the file and the field', async () => {
    const routes = { ENGINE_ROUTES: 'text-to-image=comfyui,*=local' };
    let dir = folderWith((m) => (m.inputs.prompt = { node: '6', input: 'txt' }));
    await expect(start({ ...routes, COMFYUI_WORKFLOWS: dir })).rejects.toThrow(`invalid configuration: COMFYUI_WORKFLOWS ${dir}/text-to-image.mapping.json: inputs.prompt names input txt of node 6 (CLIPTextEncode), which it does not have (text, clip)`);
    dir = folderWith((m) => (m.inputs.seed = { node: '42', input: 'seed' }));
    await expect(start({ ...routes, COMFYUI_WORKFLOWS: dir })).rejects.toThrow(/text-to-image\.mapping\.json: inputs\.seed names node 42, which the workflow does not have/);
    dir = folderWith((m) => (m.output = 7));
    await expect(start({ ...routes, COMFYUI_WORKFLOWS: dir })).rejects.toThrow(/text-to-image\.mapping\.json: output Invalid input: expected string/);
    dir = folderWith((m) => (m.kind = 'video'));
    await expect(start({ ...routes, COMFYUI_WORKFLOWS: dir })).rejects.toThrow(/text-to-image\.mapping\.json: video is required for a video workflow/);
    dir = folderWith((_m, g) => (g['8'].inputs.vae = ['77', 2]));
    await expect(start({ ...routes, COMFYUI_WORKFLOWS: dir })).rejects.toThrow(/text-to-image\.json: node 8 input vae links to node 77/);
    dir = folderWith((_m, g) => {
      for (const k of Object.keys(g)) delete g[k];
      Object.assign(g, { nodes: [], links: [] });
    });
    await expect(start({ ...routes, COMFYUI_WORKFLOWS: dir })).rejects.toThrow(/text-to-image\.json: nodes .*export the workflow in API format/);
    // A route to comfyui without its workflow.
    dir = folderWith(() => {});
    await expect(start({ ENGINE_ROUTES: 'ai-video=comfyui,*=local', COMFYUI_WORKFLOWS: dir })).rejects.toThrow(`invalid configuration: COMFYUI_WORKFLOWS ${dir}/ai-video.mapping.json: is missing (or cannot be read)`);
    await expect(start({ ...routes, COMFYUI_WORKFLOWS: dir })).resolves.toBeDefined();
  });

  it('route keys: the ENGINE_ROUTES keys whose chain names comfyui', () => {
    expect(comfyRouteKeys('text-to-image=comfyui|openai, ai-video=fal|comfyui,image-edit=openai,*=local')).toEqual(['text-to-image', 'ai-video']);
    expect(comfyRouteKeys(undefined)).toEqual([]);
    expect(loadConfig({ DATA_DIR: '/tmp/x', COMFYUI_URL: 'gpu1, https://gpu2.example:9000/ ,10.0.0.5:8190' }).upstream.comfyui?.urls).toEqual(['http://gpu1:8188', 'https://gpu2.example:9000', 'http://10.0.0.5:8190']);
    expect(() => loadConfig({ DATA_DIR: '/tmp/x', COMFYUI_URL: 'ftp://gpu1' })).toThrow(/COMFYUI_URL/);
  });

  it('reads the queue, the history and ComfyUI errors; chooses the least loaded server', () => {
    const q = { queue_running: [[5, 'r', {}, {}, []]], queue_pending: [[9, 'z', {}, {}, []], [7, 'me', {}, {}, []]] };
    expect(queueState(q, 'me')).toEqual({ load: 3, running: false, position: 1 });
    expect(queueState(q, 'r')).toEqual({ load: 3, running: true });
    expect(leastLoaded([undefined, { url: 'a', load: 3 }, { url: 'b', load: 1 }, { url: 'c', load: 1 }])).toEqual({ url: 'b', load: 1 });
    expect(leastLoaded([undefined, undefined])).toBeUndefined();
    const entry = { outputs: { '9': { images: [{ filename: 'a.png', subfolder: '', type: 'output' }, { filename: 'v.mp4', type: 'output' }], animated: [true] } }, status: { status_str: 'success', completed: true, messages: [] } };
    expect(outputFiles(entry as never, '9', 'image').map((f) => f.filename)).toEqual(['a.png']);
    expect(outputFiles(entry as never, '9', 'video').map((f) => f.filename)).toEqual(['v.mp4']);
    expect(historyFailure({ status: { status_str: 'error', messages: [['execution_start', {}], ['execution_error', { node_id: '12', node_type: 'VAEDecode', exception_message: 'boom\n' }]] } })).toBe('ComfyUI node 12 (VAEDecode) failed: boom');
    expect(comfyMessage({ error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation' }, node_errors: { '4': { class_type: 'CheckpointLoaderSimple', errors: [{ message: 'Value not in list', details: "ckpt_name: 'x' not in []" }] } } })).toBe(
      "Prompt outputs failed validation; node 4 (CheckpointLoaderSimple): Value not in list: ckpt_name: 'x' not in []",
    );
  });
});
