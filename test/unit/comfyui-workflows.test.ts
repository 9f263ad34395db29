import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildEngines } from '../../src/adapters/engines/from-config.ts';
import { comfyRouteKeys } from '../../src/adapters/engines/comfyui/provider.ts';
import { droppedOutputs, leastLoaded, outputFiles } from '../../src/adapters/engines/comfyui/comfyui-engine.ts';
import { atLeast } from '../../src/adapters/engines/comfyui/comfyui-server.ts';
import { savedFiles, inputFile } from '../../src/adapters/engines/comfyui/comfyui-release.ts';
import { inputsOf } from '../../src/adapters/engines/comfyui/comfyui-inputs.ts';
import { comfyMessage, historyFailure, oneLine } from '../../src/adapters/engines/comfyui/comfyui-messages.ts';
import { SHIPPED_WORKFLOWS, fillGraph, frameCount, frameSize, loadWorkflow, workflowKeys } from '../../src/adapters/engines/comfyui/workflows.ts';
import { loadConfig } from '../../src/config.ts';
import { SHIPPED_MODELS } from '../support/comfyui-fake.ts';
import { validatePrompt } from '../support/comfyui-nodes.ts';

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
  it('every shipped workflow, filled for a request, passes validate_prompt as the fake runs it (COMBO values, model files, link types)', () => {
    const keys = workflowKeys(SHIPPED_WORKFLOWS);
    expect(keys).toEqual(['ai-video', 'image-edit', 'product-shots', 'text-to-image']);
    for (const key of keys) {
      const w = loadWorkflow(SHIPPED_WORKFLOWS, key);
      const images = w.mapping.inputs.images.map((_, i) => `adforge/in-${i}.png`);
      const graph = fillGraph(w, { prompt: 'p', params: { aspect_ratio: '9:16', resolution: '1k', quantity: 1, duration: 5 }, seed: 7, images });
      expect(validatePrompt(graph, { folders: SHIPPED_MODELS, inputFiles: new Set(images) }), key).toEqual({ ok: true, outputs: [w.mapping.output], nodeErrors: {} });
      expect(graph[w.mapping.inputs.prompt.node]!.inputs[w.mapping.inputs.prompt.input], key).toBe('p');
      expect(graph[w.mapping.inputs.seed!.node]!.inputs.seed, key).toBe(7);
    }
  });

  it('the fake refuses what ComfyUI refuses, and validates only what an output needs', () => {
    const w = loadWorkflow(SHIPPED_WORKFLOWS, 'image-edit');
    const ctx = { folders: SHIPPED_MODELS, inputFiles: new Set(['adforge/in.png']) };
    const edited = (edit: (g: Record<string, any>) => void) => {
      const g = structuredClone(w.graph) as Record<string, any>;
      g['10'].inputs.image = 'adforge/in.png';
      edit(g);
      return validatePrompt(g, ctx);
    };
    expect(validatePrompt(structuredClone(w.graph), ctx)).toMatchObject({ ok: false, nodeErrors: { '10': { errors: [{ type: 'custom_validation_failed', details: 'image - Invalid image file: example.png' }], dependent_outputs: ['9'] } } });
    expect(edited((g) => delete g['3'].inputs.cfg)).toMatchObject({ ok: false, nodeErrors: { '3': { errors: [{ type: 'required_input_missing', details: 'cfg' }] } } });
    expect(edited((g) => (g['3'].inputs.sampler_name = 'dpmpp_9m'))).toMatchObject({ ok: false, nodeErrors: { '3': { errors: [{ type: 'value_not_in_list', details: "sampler_name: 'dpmpp_9m' not in (list of length 42)" }] } } });
    expect(edited((g) => (g['3'].inputs.scheduler = 'fast'))).toMatchObject({ ok: false, nodeErrors: { '3': { errors: [{ type: 'value_not_in_list', details: expect.stringMatching(/^scheduler: 'fast' not in \['simple', /) }] } } });
    expect(edited((g) => (g['4'].inputs.ckpt_name = 'flux1-dev.safetensors'))).toMatchObject({ ok: false, nodeErrors: { '4': { errors: [{ type: 'value_not_in_list', details: "ckpt_name: 'flux1-dev.safetensors' not in ['sd_xl_base_1.0.safetensors']" }] } } });
    expect(edited((g) => (g['3'].inputs.positive = ['4', 1]))).toMatchObject({ ok: false, nodeErrors: { '3': { errors: [{ type: 'return_type_mismatch', details: 'positive, received_type(CLIP) mismatch input_type(CONDITIONING)' }] } } });
    expect(edited((g) => (g['3'].inputs.denoise = 1.5))).toMatchObject({ ok: false, nodeErrors: { '3': { errors: [{ type: 'value_bigger_than_max' }] } } });
    expect(edited((g) => (g['3'].inputs.steps = 'many'))).toMatchObject({ ok: false, nodeErrors: { '3': { errors: [{ type: 'invalid_input_type' }] } } });
    // A dangling link is a KeyError inside validate_inputs, reported on the output.
    expect(edited((g) => (g['8'].inputs.samples = ['99', 0]))).toMatchObject({ ok: false, nodeErrors: { '9': { errors: [{ type: 'exception_during_validation', details: "'99'" }] } } });
    // Nodes no output needs are not validated.
    expect(edited((g) => (g['50'] = { class_type: 'KSampler', inputs: { sampler_name: 'nope' } }))).toMatchObject({ ok: true, outputs: ['9'], nodeErrors: {} });
    // A second output that fails is dropped; the prompt is queued with the good one.
    const twoOutputs = edited((g) => {
      g['30'] = { class_type: 'LoadImage', inputs: { image: 'adforge/gone.png' } };
      g['31'] = { class_type: 'PreviewImage', inputs: { images: ['30', 0] } };
    });
    expect(twoOutputs).toMatchObject({ ok: true, outputs: ['9'], nodeErrors: { '30': { dependent_outputs: ['31'], class_type: 'LoadImage' } } });
    expect(edited((g) => (g['3'].class_type = 'NoSuchNode'))).toMatchObject({ ok: false, error: { type: 'missing_node_type', message: "Node 'Sampler (keeps 40% of the input)' not found. The custom node may not be installed." } });
    const video = structuredClone(loadWorkflow(SHIPPED_WORKFLOWS, 'ai-video').graph) as Record<string, any>;
    delete video['51'].inputs.format;
    expect(validatePrompt(video, ctx)).toMatchObject({ ok: false, nodeErrors: { '51': { errors: [{ type: 'required_input_missing', details: 'format' }] } } });
    video['51'].inputs.format = 'webm';
    expect(validatePrompt(video, ctx)).toMatchObject({ ok: false, nodeErrors: { '51': { errors: [{ type: 'custom_validation_failed' }] } } });
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

  it('reads the history and ComfyUI errors; chooses the least loaded server', () => {
    expect(leastLoaded([undefined, { url: 'a', load: 3 }, { url: 'b', load: 1 }, { url: 'c', load: 1 }])).toEqual({ url: 'b', load: 1 });
    expect(leastLoaded([undefined, undefined])).toBeUndefined();
    const entry = { outputs: { '9': { images: [{ filename: 'a.png', subfolder: '', type: 'output' }, { filename: 'v.mp4', type: 'output' }], animated: [true] } }, status: { status_str: 'success', completed: true, messages: [] } };
    expect(outputFiles(entry as never, '9', 'image').map((f) => f.filename)).toEqual(['a.png']);
    expect(outputFiles(entry as never, '9', 'video').map((f) => f.filename)).toEqual(['v.mp4']);
    expect(historyFailure({ status: { status_str: 'error', messages: [['execution_start', {}], ['execution_error', { node_id: '12', node_type: 'VAEDecode', exception_message: 'boom\n' }]] } })).toBe('ComfyUI node 12 (VAEDecode) failed: boom');
    expect(comfyMessage({ error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation', details: "Value not in list: ckpt_name: 'x' not in ['a.safetensors', 'b.safetensors']" }, node_errors: { '4': { class_type: 'CheckpointLoaderSimple', errors: [{ message: 'Value not in list', details: "ckpt_name: 'x' not in ['a.safetensors', 'b.safetensors']", extra_info: { input_name: 'ckpt_name' } }] } } })).toBe(
      'Prompt outputs failed validation; node 4 (CheckpointLoaderSimple): Value not in list (ckpt_name)',
    );
    expect(oneLine("[Errno 2] No such file or directory: '/opt/ComfyUI/models/vae/x.safetensors'\n\nTIPS: more")).toBe("[Errno 2] No such file or directory: 'x.safetensors'");
    expect(oneLine('size 4/8/16 does not match')).toBe('size 4/8/16 does not match');
  });

  it('reads what ComfyUI says of builds, dropped outputs and saved files', () => {
    expect([atLeast('0.3.57', [0, 3, 57]), atLeast('0.38.1', [0, 3, 57]), atLeast('0.3.56', [0, 3, 57]), atLeast('0.3.64-dev', [0, 3, 57]), atLeast('', [0, 3, 57])]).toEqual([true, true, false, true, false]);
    expect(droppedOutputs({ '30': { errors: [], dependent_outputs: ['31', '9'], class_type: 'LoadImage' }, '5': { errors: [], dependent_outputs: [], class_type: 'X' } })).toEqual(new Set(['31', '9', '5']));
    expect(droppedOutputs({})).toEqual(new Set());
    const entry = { outputs: { '9': { images: [{ filename: 'a_00001_.png', subfolder: 'adforge', type: 'output' }], animated: [true] }, '31': { images: [{ filename: 'ComfyUI_temp_abcde_00001_.png', subfolder: '', type: 'temp' }, { filename: 'in.png', type: 'input' }] } } };
    expect(savedFiles(entry as never)).toEqual([{ filename: 'a_00001_.png', subfolder: 'adforge', type: 'output' }, { filename: 'ComfyUI_temp_abcde_00001_.png', subfolder: '', type: 'temp' }]);
    expect(inputFile('adforge/x-1.png')).toEqual({ filename: 'x-1.png', subfolder: 'adforge', type: 'input' });
    const w = loadWorkflow(SHIPPED_WORKFLOWS, 'image-edit');
    const graph = fillGraph(w, { prompt: 'p', params: { aspect_ratio: '1:1', resolution: '1k', quantity: 1 }, seed: 1, images: ['adforge/id-1.png'] });
    expect(inputsOf(w.mapping, graph)).toEqual(['adforge/id-1.png']);
  });
});
