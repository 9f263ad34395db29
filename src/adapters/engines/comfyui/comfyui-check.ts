import type { Dispatcher } from 'undici';
import type { CheckResult } from '../../provider-check.ts';
import { freeRead } from '../../net/free-read.ts';
import type { Graph } from './workflows.ts';

/*
 * `adforge providers check` for ComfyUI, with reads that cost nothing (test/contracts/comfyui/):
 * GET /prompt proves each server answers with a few bytes, whatever its queue holds (ComfyUI has no
 * key; the `key` line says which servers answered), and GET /models/{folder} (server.py get_models; folder names from folder_paths.py)
 * that every model file a routed workflow's loaders name is in that folder on every server.
 */

/** The model file inputs of ComfyUI's loader nodes, and the models/ folder each is read from (nodes.py; folder_paths.py). */
export const LOADER_FOLDERS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  CheckpointLoaderSimple: { ckpt_name: 'checkpoints' },
  UNETLoader: { unet_name: 'diffusion_models' },
  CLIPLoader: { clip_name: 'text_encoders' },
  DualCLIPLoader: { clip_name1: 'text_encoders', clip_name2: 'text_encoders' },
  VAELoader: { vae_name: 'vae' },
  CLIPVisionLoader: { clip_name: 'clip_vision' },
  LoraLoader: { lora_name: 'loras' },
  LoraLoaderModelOnly: { lora_name: 'loras' },
};

/** The model files a workflow needs, as `<folder>/<file>`. */
export function modelFiles(graph: Graph): string[] {
  const out = new Set<string>();
  for (const node of Object.values(graph)) {
    for (const [input, folder] of Object.entries(LOADER_FOLDERS[node.class_type] ?? {})) {
      const file = node.inputs[input];
      if (typeof file === 'string' && file) out.add(`${folder}/${file}`);
    }
  }
  return [...out].sort();
}

export function createComfyUiCheck(o: { urls: readonly string[]; dispatcher: Dispatcher; timeoutMs?: number }) {
  const read = (url: string, path: string, signal: AbortSignal) => freeRead({ provider: 'ComfyUI', url: `${url}${path}`, headers: {}, dispatcher: o.dispatcher, signal, timeoutMs: o.timeoutMs });
  return async function check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const answering: string[] = [];
    const down: string[] = [];
    for (const url of o.urls) {
      const r = await read(url, '/prompt', signal);
      ('status' in r && r.status === 200 ? answering : down).push(url);
    }
    const servers: CheckResult = answering.length
      ? { target: 'key', outcome: 'ok', detail: `${answering.length} of ${o.urls.length} ComfyUI servers answer GET /prompt${down.length ? ` (not: ${down.join(', ')})` : ''}` }
      : { target: 'key', outcome: 'unreachable', detail: `no ComfyUI server answers GET /prompt (${o.urls.join(', ')})` };
    if (!answering.length) return [servers, ...targets.map((target): CheckResult => ({ target, outcome: 'unreachable', detail: 'not checked: no server answers' }))];
    // Each folder read once per server.
    const lists = new Map<string, string[] | undefined>();
    const listed = async (url: string, folder: string) => {
      const k = `${url} ${folder}`;
      if (!lists.has(k)) {
        const r = await read(url, `/models/${encodeURIComponent(folder)}`, signal);
        lists.set(k, 'status' in r && r.status === 200 && Array.isArray(r.json) ? (r.json as unknown[]).filter((n): n is string => typeof n === 'string') : undefined);
      }
      return lists.get(k);
    };
    const results: CheckResult[] = [servers];
    for (const target of targets) {
      const slash = target.indexOf('/');
      const [folder, file] = [target.slice(0, slash), target.slice(slash + 1)];
      const missing: string[] = [];
      for (const url of answering) {
        const names = await listed(url, folder);
        if (!names?.includes(file)) missing.push(url);
      }
      results.push(missing.length ? { target, outcome: 'model_gone', detail: `not in models/${folder} on ${missing.join(', ')} (GET /models/${folder})` } : { target, outcome: 'ok', detail: `in models/${folder} on every server that answers` });
    }
    return results;
  };
}
