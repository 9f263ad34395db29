/*
 * The built-in ComfyUI nodes the fake knows, with their inputs as INPUT_TYPES declares them, and
 * validate_prompt as ComfyUI runs it on POST /prompt. Read from Comfy-Org/ComfyUI:
 * - nodes.py @ a125cd84b054a57729b5eecab930ca9408719832 (CheckpointLoaderSimple, UNETLoader,
 *   CLIPLoader, VAELoader, CLIPTextEncode, EmptyLatentImage, KSampler, VAEDecode, VAEEncode,
 *   RepeatLatentBatch, LoadImage with its VALIDATE_INPUTS, ImageScale, SaveImage, PreviewImage;
 *   MAX_RESOLUTION 16384), comfy/samplers.py there (KSampler.SAMPLERS = KSAMPLER_NAMES + ddim,
 *   uni_pc, uni_pc_bh2; SCHEDULERS = the SCHEDULER_HANDLERS keys), comfy_extras/nodes_hunyuan.py
 *   (EmptyHunyuanLatentVideo), comfy_extras/nodes_model_advanced.py (ModelSamplingSD3);
 * - comfy_extras/nodes_video.py @ 39b885faf94458563e272c4881fa369717567462 (SaveVideo: video,
 *   filename_prefix and the `format` choice with its nested `format.codec`, all required, and a
 *   hidden optional top-level `codec`; CreateVideo: images, fps, optional audio, bit_depth,
 *   color_space, codec);
 * - execution.py @ 04e2a914334246661a77665aa14068a0670e3321 (validate_prompt, validate_inputs:
 *   only output nodes and what they link to are validated; the error types and their words).
 * Model file lists come from the server's folders (the fake's `models`), as
 * folder_paths.get_filename_list reads them.
 */

export type Folders = Readonly<Record<string, readonly string[]>>;

type Literal = { kind: 'INT' | 'FLOAT'; min?: number; max?: number } | { kind: 'STRING' } | { kind: 'BOOLEAN' };
type Combo = { kind: 'COMBO'; options: (f: Folders) => readonly (string | number)[] };
type Link = { kind: 'LINK'; type: string };
export type InputSpec = Literal | Combo | Link;

export interface NodeSpec {
  required: Record<string, InputSpec>;
  optional?: Record<string, InputSpec>;
  returns: readonly string[];
  /** OUTPUT_NODE, and what it saves: files in output/ (image, video) or temp/ (preview). */
  output?: 'image' | 'video' | 'preview';
  /** VALIDATE_INPUTS: the inputs it takes are checked by it, not by their COMBO list (execution.py validate_inputs). */
  validate?: { inputs: readonly string[]; check: (inputs: Record<string, unknown>, inputFiles: ReadonlySet<string>) => string | undefined };
}

const MAX_RESOLUTION = 16384;
const int = (min?: number, max?: number): Literal => ({ kind: 'INT', ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) });
const float = (min?: number, max?: number): Literal => ({ kind: 'FLOAT', ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) });
const text: Literal = { kind: 'STRING' };
const link = (type: string): Link => ({ kind: 'LINK', type });
const combo = (options: readonly (string | number)[]): Combo => ({ kind: 'COMBO', options: () => options });
const files = (folder: string, extra: readonly string[] = []): Combo => ({ kind: 'COMBO', options: (f) => [...(f[folder] ?? []), ...extra] });

// comfy/samplers.py @ a125cd84
const KSAMPLER_NAMES = ['euler', 'euler_cfg_pp', 'euler_ancestral', 'euler_ancestral_cfg_pp', 'heun', 'heunpp2', 'dpm_2', 'dpm_2_ancestral', 'lms', 'dpm_fast', 'dpm_adaptive', 'dpmpp_2s_ancestral', 'dpmpp_2s_ancestral_cfg_pp', 'dpmpp_sde', 'dpmpp_sde_gpu', 'dpmpp_2m', 'dpmpp_2m_cfg_pp', 'dpmpp_2m_sde', 'dpmpp_2m_sde_gpu', 'dpmpp_2m_sde_heun', 'dpmpp_2m_sde_heun_gpu', 'dpmpp_3m_sde', 'dpmpp_3m_sde_gpu', 'ddpm', 'lcm', 'ipndm', 'ipndm_v', 'deis', 'res_multistep', 'res_multistep_cfg_pp', 'res_multistep_ancestral', 'res_multistep_ancestral_cfg_pp', 'gradient_estimation', 'gradient_estimation_cfg_pp', 'er_sde', 'seeds_2', 'seeds_3', 'sa_solver', 'sa_solver_pece'];
export const SAMPLERS = [...KSAMPLER_NAMES, 'ddim', 'uni_pc', 'uni_pc_bh2'];
export const SCHEDULERS = ['simple', 'sgm_uniform', 'karras', 'exponential', 'ddim_uniform', 'beta', 'normal', 'linear_quadratic', 'kl_optimal'];
const CLIP_TYPES = ['stable_diffusion', 'stable_cascade', 'sd3', 'stable_audio', 'mochi', 'ltxv', 'pixart', 'cosmos', 'lumina2', 'wan', 'hidream', 'chroma', 'ace', 'omnigen2', 'qwen_image', 'hunyuan_image'];
const SCALE_METHODS = ['nearest-exact', 'bilinear', 'area', 'bicubic', 'lanczos'];
// SaveVideo's `format` choices and, nested under each, its `codec` choices (nodes_video.py @ 39b885fa).
const VIDEO_FORMATS: Record<string, readonly string[]> = { auto: ['auto', 'h264', 'av1'], mp4: ['auto', 'h264', 'av1'], mkv: ['auto', 'h264', 'av1'], webm: ['auto', 'av1'] };

/** LoadImage.VALIDATE_INPUTS: folder_paths.exists_annotated_filepath(image), the name relative to input/. */
const inputFileExists: NodeSpec['validate'] = {
  inputs: ['image'],
  check: (inputs, inputFiles) => (typeof inputs.image === 'string' && inputFiles.has(inputs.image) ? undefined : `Invalid image file: ${String(inputs.image)}`),
};

export const COMFY_NODES: Readonly<Record<string, NodeSpec>> = {
  CheckpointLoaderSimple: { required: { ckpt_name: files('checkpoints') }, returns: ['MODEL', 'CLIP', 'VAE'] },
  UNETLoader: { required: { unet_name: files('diffusion_models'), weight_dtype: combo(['default', 'fp8_e4m3fn', 'fp8_e4m3fn_fast', 'fp8_e5m2']) }, returns: ['MODEL'] },
  CLIPLoader: { required: { clip_name: files('text_encoders'), type: combo(CLIP_TYPES) }, optional: { device: combo(['default', 'cpu']) }, returns: ['CLIP'] },
  // VAELoader.vae_list: the vae folder, the taesd pairs found in vae_approx, and pixel_space.
  VAELoader: { required: { vae_name: files('vae', ['pixel_space']) }, returns: ['VAE'] },
  CLIPTextEncode: { required: { text, clip: link('CLIP') }, returns: ['CONDITIONING'] },
  EmptyLatentImage: { required: { width: int(16, MAX_RESOLUTION), height: int(16, MAX_RESOLUTION), batch_size: int(1, 4096) }, returns: ['LATENT'] },
  EmptyHunyuanLatentVideo: { required: { width: int(16, MAX_RESOLUTION), height: int(16, MAX_RESOLUTION), length: int(1, MAX_RESOLUTION), batch_size: int(1, 4096) }, returns: ['LATENT'] },
  ModelSamplingSD3: { required: { model: link('MODEL'), shift: float(0, 100) }, returns: ['MODEL'] },
  KSampler: {
    required: {
      model: link('MODEL'),
      seed: int(0, Number.MAX_SAFE_INTEGER),
      steps: int(1, 10000),
      cfg: float(0, 100),
      sampler_name: combo(SAMPLERS),
      scheduler: combo(SCHEDULERS),
      positive: link('CONDITIONING'),
      negative: link('CONDITIONING'),
      latent_image: link('LATENT'),
      denoise: float(0, 1),
    },
    returns: ['LATENT'],
  },
  VAEDecode: { required: { samples: link('LATENT'), vae: link('VAE') }, returns: ['IMAGE'] },
  VAEEncode: { required: { pixels: link('IMAGE'), vae: link('VAE') }, returns: ['LATENT'] },
  RepeatLatentBatch: { required: { samples: link('LATENT'), amount: int(1, 64) }, returns: ['LATENT'] },
  LoadImage: { required: { image: files('input') }, returns: ['IMAGE', 'MASK'], validate: inputFileExists },
  ImageScale: { required: { image: link('IMAGE'), upscale_method: combo(SCALE_METHODS), width: int(0, MAX_RESOLUTION), height: int(0, MAX_RESOLUTION), crop: combo(['disabled', 'center']) }, returns: ['IMAGE'] },
  CreateVideo: {
    required: { images: link('IMAGE'), fps: float(1, 120) },
    optional: { audio: link('AUDIO'), bit_depth: combo(['auto', 8, 10]), color_space: combo(['sRGB', 'HDR', 'HDR PQ']), codec: combo(['none', 'auto', 'h264', 'av1']) },
    returns: ['VIDEO'],
  },
  SaveImage: { required: { images: link('IMAGE'), filename_prefix: text }, returns: [], output: 'image' },
  PreviewImage: { required: { images: link('IMAGE') }, returns: [], output: 'preview' },
  SaveVideo: {
    required: { video: link('VIDEO'), filename_prefix: text, format: combo(Object.keys(VIDEO_FORMATS)), 'format.codec': combo(['auto', 'h264', 'av1']) },
    optional: { codec: combo(['auto', 'h264', 'av1']) },
    returns: ['VIDEO'],
    output: 'video',
    // The nested codec choices depend on the format picked (webm takes no h264).
    validate: {
      inputs: [],
      check: (inputs) => {
        const allowed = VIDEO_FORMATS[String(inputs.format)];
        return allowed && !allowed.includes(String(inputs['format.codec'])) ? `format.codec: '${String(inputs['format.codec'])}' not in ${JSON.stringify(allowed)}` : undefined;
      },
    },
  },
};

type Graph = Record<string, { class_type?: unknown; inputs?: Record<string, unknown>; _meta?: { title?: string } }>;
export type ComfyError = { type: string; message: string; details: string; extra_info: Record<string, unknown> };
export type NodeErrors = Record<string, { errors: ComfyError[]; dependent_outputs: string[]; class_type: string }>;
export type Validation =
  | { ok: true; outputs: string[]; nodeErrors: NodeErrors }
  | { ok: false; error: ComfyError; nodeErrors: NodeErrors };

/** A Python KeyError or IndexError raised inside validate_inputs: validate_prompt turns it into exception_during_validation. */
class PythonError extends Error {}

const pyRepr = (v: unknown) => (typeof v === 'string' ? `'${v}'` : String(v));
const isLink = (v: unknown): v is unknown[] => Array.isArray(v);

/** execution.py validate_prompt, for the nodes of COMFY_NODES: which outputs run, and each failing node's errors. */
export function validatePrompt(prompt: Graph, ctx: { folders: Folders; inputFiles: ReadonlySet<string> }, nodes = COMFY_NODES): Validation {
  const outputs: string[] = [];
  for (const [id, node] of Object.entries(prompt)) {
    const title = node._meta?.title;
    if (typeof node.class_type !== 'string') {
      return { ok: false, error: { type: 'missing_node_type', message: `Node '${title ?? `ID #${id}`}' has no class_type. The workflow may be corrupted or a custom node is missing.`, details: `Node ID '#${id}'`, extra_info: { node_id: id, class_type: null, node_title: title ?? null } }, nodeErrors: {} };
    }
    const spec = nodes[node.class_type];
    if (!spec) {
      return { ok: false, error: { type: 'missing_node_type', message: `Node '${title ?? node.class_type}' not found. The custom node may not be installed.`, details: `Node ID '#${id}'`, extra_info: { node_id: id, class_type: node.class_type, node_title: title ?? node.class_type } }, nodeErrors: {} };
    }
    if (spec.output) outputs.push(id);
  }
  if (!outputs.length) return { ok: false, error: { type: 'prompt_no_outputs', message: 'Prompt has no outputs', details: '', extra_info: {} }, nodeErrors: {} };

  const validated = new Map<string, { valid: boolean; errors: ComfyError[] }>();
  const visit = (id: string, visiting: string[]): { valid: boolean; errors: ComfyError[] } => {
    const done = validated.get(id);
    if (done) return done;
    if (visiting.includes(id)) {
      const path = [...visiting.slice(visiting.indexOf(id)), id];
      const details = path.map((n) => `${n} (${String(prompt[n]!.class_type)})`).join(' -> ');
      for (const n of new Set(path)) validated.set(n, { valid: false, errors: [{ type: 'dependency_cycle', message: 'Dependency cycle detected', details, extra_info: { node_id: n } }] });
      return validated.get(id)!;
    }
    const node = prompt[id]!;
    const spec = nodes[String(node.class_type)]!;
    const inputs = node.inputs ?? {};
    const errors: ComfyError[] = [];
    let valid = true;
    const byFunction = new Set(spec.validate?.inputs ?? []);
    const declared: Array<[string, InputSpec, boolean]> = [...Object.entries(spec.required).map(([n, s]): [string, InputSpec, boolean] => [n, s, true]), ...Object.entries(spec.optional ?? {}).map(([n, s]): [string, InputSpec, boolean] => [n, s, false])];
    for (const [name, inputSpec, required] of declared) {
      if (!(name in inputs)) {
        if (required) errors.push({ type: 'required_input_missing', message: 'Required input is missing', details: name, extra_info: { input_name: name } });
        continue;
      }
      let val = inputs[name];
      if (isLink(val)) {
        if (val.length !== 2) {
          errors.push({ type: 'bad_linked_input', message: 'Bad linked input, must be a length-2 list of [node_id, slot_index]', details: name, extra_info: { input_name: name, received_value: val } });
          continue;
        }
        const from = prompt[String(val[0])];
        if (!from) throw new PythonError(pyRepr(val[0]));
        const received = nodes[String(from.class_type)]!.returns[Number(val[1])];
        if (received === undefined) throw new PythonError('tuple index out of range');
        const expected = inputSpec.kind === 'LINK' ? inputSpec.type : inputSpec.kind;
        if (received !== expected && !received.split(',').some((t) => expected.split(',').includes(t.trim()))) {
          errors.push({ type: 'return_type_mismatch', message: 'Return type mismatch between linked nodes', details: `${name}, received_type(${received}) mismatch input_type(${expected})`, extra_info: { input_name: name, received_type: received, linked_node: val } });
          continue;
        }
        visiting.push(id);
        const r = visit(String(val[0]), visiting);
        visiting.pop();
        if (!r.valid) valid = false;
        continue;
      }
      if (inputSpec.kind === 'LINK') {
        // A literal where a node's output is expected: the type conversion below does not apply; ComfyUI fails such an input when it runs, not here.
        continue;
      }
      if (val && typeof val === 'object' && '__value__' in val) val = (val as { __value__: unknown }).__value__;
      if (inputSpec.kind === 'INT' || inputSpec.kind === 'FLOAT') {
        const n = typeof val === 'number' ? (inputSpec.kind === 'INT' ? Math.trunc(val) : val) : typeof val === 'boolean' ? Number(val) : typeof val === 'string' && val.trim() !== '' && Number.isFinite(Number(val)) && (inputSpec.kind === 'FLOAT' || /^\s*[+-]?\d+\s*$/.test(val)) ? Number(val) : undefined;
        if (n === undefined) {
          errors.push({ type: 'invalid_input_type', message: `Failed to convert an input value to a ${inputSpec.kind} value`, details: `${name}, ${String(val)}, invalid literal`, extra_info: { input_name: name, received_value: val } });
          continue;
        }
        if (!byFunction.has(name)) {
          if (inputSpec.min !== undefined && n < inputSpec.min) {
            errors.push({ type: 'value_smaller_than_min', message: `Value ${n} smaller than min of ${inputSpec.min}`, details: name, extra_info: { input_name: name, received_value: n } });
            continue;
          }
          if (inputSpec.max !== undefined && n > inputSpec.max) {
            errors.push({ type: 'value_bigger_than_max', message: `Value ${n} bigger than max of ${inputSpec.max}`, details: name, extra_info: { input_name: name, received_value: n } });
            continue;
          }
        }
      }
      if (inputSpec.kind === 'COMBO' && !byFunction.has(name)) {
        const options = inputSpec.options(ctx.folders);
        if (!options.includes(val as string | number)) {
          // execution.py: lists over 20 entries (scanned model files) are not sent back.
          const list = options.length > 20 ? `(list of length ${options.length})` : `[${options.map(pyRepr).join(', ')}]`;
          errors.push({ type: 'value_not_in_list', message: 'Value not in list', details: `${name}: ${pyRepr(val)} not in ${list}`, extra_info: { input_name: name, received_value: val } });
          continue;
        }
      }
    }
    const custom = spec.validate?.check(inputs, ctx.inputFiles);
    if (custom) {
      const input = spec.validate!.inputs[0];
      errors.push({ type: 'custom_validation_failed', message: 'Custom validation failed for node', details: input ? `${input} - ${custom}` : custom, extra_info: input ? { input_name: input } : {} });
    }
    const result = { valid: valid && !errors.length, errors };
    validated.set(id, result);
    return result;
  };

  const good: string[] = [];
  const failed: Array<[string, ComfyError[]]> = [];
  const nodeErrors: NodeErrors = {};
  for (const o of outputs) {
    let result: { valid: boolean; errors: ComfyError[] };
    try {
      result = visit(o, []);
    } catch (e) {
      if (!(e instanceof PythonError)) throw e;
      result = { valid: false, errors: [{ type: 'exception_during_validation', message: 'Exception when validating node', details: e.message, extra_info: { exception_type: e.message === 'tuple index out of range' ? 'IndexError' : 'KeyError', traceback: ['  File "/opt/ComfyUI/execution.py", line 1012, in validate_prompt\n'] } }] };
      validated.set(o, result);
    }
    if (result.valid) {
      good.push(o);
      continue;
    }
    failed.push([o, result.errors]);
    // Every node validated so far with errors of its own names this output as dependent (execution.py does the same).
    for (const [id, r] of validated) {
      if (r.valid || !r.errors.length) continue;
      nodeErrors[id] ??= { errors: r.errors, dependent_outputs: [], class_type: String(prompt[id]!.class_type) };
      nodeErrors[id].dependent_outputs.push(o);
    }
  }
  if (!good.length) {
    const details = failed.flatMap(([, errs]) => errs.map((e) => `${e.message}: ${e.details}`)).join('\n');
    return { ok: false, error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation', details, extra_info: {} }, nodeErrors };
  }
  return { ok: true, outputs: good, nodeErrors };
}

/** The nodes an output needs, dependencies first (what ExecutionList runs for it). */
export function executionOrder(prompt: Graph, outputs: readonly string[]): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  const walk = (id: string) => {
    if (seen.has(id) || !prompt[id]) return;
    seen.add(id);
    for (const v of Object.values(prompt[id]!.inputs ?? {})) if (isLink(v) && v.length === 2) walk(String(v[0]));
    order.push(id);
  };
  for (const o of outputs) walk(o);
  return order;
}
