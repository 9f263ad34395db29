import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parseAspectRatio } from '../../../domain/aspect-ratio.ts';
import { IMAGE_LONG_SIDE } from '../../../domain/image-inputs.ts';
import type { GenerationOperation, ImageResolution } from '../../../domain/generation-types.ts';

/*
 * ComfyUI workflows as templates. For each route key (an operation or a model, as ENGINE_ROUTES
 * names them) the folder COMFYUI_WORKFLOWS holds `<key>.json`, a graph in ComfyUI's API format
 * (what "Export (API)" saves: node ids to {class_type, inputs}, a link being [node id, output
 * index], as execution.py validate_inputs reads it), and `<key>.mapping.json`, which names the
 * node inputs our fields go into and the node whose output is the result. docs/gpu.md describes
 * both, field by field.
 */

/** The folder of the workflows adforge ships (the default of COMFYUI_WORKFLOWS). */
export const SHIPPED_WORKFLOWS = path.join(import.meta.dirname, 'workflows');

/** The operations a ComfyUI workflow can make (and that adforge ships workflows for). */
export const COMFYUI_OPERATIONS = ['text-to-image', 'product-shots', 'image-edit', 'ai-video'] as const satisfies readonly GenerationOperation[];

const nodeInput = z.strictObject({ node: z.string().min(1), input: z.string().min(1) });
export type NodeInput = z.infer<typeof nodeInput>;

export const mappingSchema = z.strictObject({
  /** What the workflow makes: checked against the operation of the route. */
  kind: z.enum(['image', 'video']),
  /** The node whose output (history `outputs[node]`) is the result. */
  output: z.string().min(1),
  inputs: z.strictObject({
    prompt: nodeInput,
    negative_prompt: nodeInput.optional(),
    width: nodeInput.optional(),
    height: nodeInput.optional(),
    seed: nodeInput.optional(),
    /** Images: how many to make (the request's quantity). */
    batch_size: nodeInput.optional(),
    /** Videos: the frame count, from the duration and frame rate. */
    frames: nodeInput.optional(),
    frame_rate: nodeInput.optional(),
    /** Load nodes' file inputs (LoadImage.image), filled in order with the request's images; each one listed is required. */
    images: z.array(nodeInput).max(8).default([]),
    /** A LoadVideo.file for the request's source video (required when given). */
    video: nodeInput.optional(),
    /** A LoadAudio.audio for the request's speech (required when given). */
    audio: nodeInput.optional(),
  }),
  /** Text put into negative_prompt. */
  negative_prompt: z.string().max(4000).default(''),
  size: z
    .strictObject({
      /** Width and height are rounded to a multiple of this (SDXL 8, Flux 16, Wan 16, LTX 32). */
      multiple_of: z.number().int().min(1).max(256).default(8),
      /** The longest side the model is made for: larger requests are scaled down to it. */
      max_long_side: z.number().int().min(64).max(8192).optional(),
    })
    .default({ multiple_of: 8 }),
  video: z
    .strictObject({
      fps: z.number().min(1).max(120),
      /** Frame counts the model takes: n * frames_multiple_of + frames_plus (Wan: 4n+1, LTX: 8n+1). */
      frames_multiple_of: z.number().int().min(1).max(64).default(1),
      frames_plus: z.number().int().min(0).max(64).default(0),
      max_frames: z.number().int().min(1).max(10_000).optional(),
    })
    .optional(),
});
export type Mapping = z.infer<typeof mappingSchema>;

export type Graph = Record<string, { class_type: string; inputs: Record<string, unknown>; _meta?: { title?: string } }>;

const graphSchema = z.record(
  z.string(),
  z.looseObject({ class_type: z.string().min(1), inputs: z.record(z.string(), z.unknown()) }),
);

export interface Workflow {
  key: string;
  graph: Graph;
  mapping: Mapping;
  /** The two files, for messages. */
  files: { graph: string; mapping: string };
}

/** A workflow or mapping the start refuses: the file and the field. */
export class WorkflowError extends Error {
  constructor(file: string, field: string, problem: string) {
    super(`invalid configuration: COMFYUI_WORKFLOWS ${file}: ${field ? `${field} ` : ''}${problem}`);
    this.name = 'WorkflowError';
  }
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new WorkflowError(file, '', 'is missing (or cannot be read)');
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new WorkflowError(file, '', `is not JSON (${(e as Error).message})`);
  }
}

/** Every graph check the mapping implies: each node input it names exists, links point at nodes that exist, the output node exists. */
export function graphProblems(graph: Graph, mapping: Mapping): Array<{ field: string; problem: string }> {
  const out: Array<{ field: string; problem: string }> = [];
  for (const [id, node] of Object.entries(graph)) {
    for (const [name, value] of Object.entries(node.inputs)) {
      if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'number' && !graph[value[0]]) {
        out.push({ field: `node ${id} input ${name}`, problem: `links to node ${value[0]}, which the workflow does not have` });
      }
    }
  }
  const named: Array<[string, NodeInput | undefined]> = Object.entries(mapping.inputs).flatMap(([field, v]) =>
    Array.isArray(v) ? v.map((n, i): [string, NodeInput] => [`inputs.${field}.${i}`, n]) : [[`inputs.${field}`, v as NodeInput | undefined]],
  );
  for (const [field, n] of named) {
    if (!n) continue;
    const node = graph[n.node];
    if (!node) out.push({ field, problem: `names node ${n.node}, which the workflow does not have` });
    else if (!(n.input in node.inputs)) out.push({ field, problem: `names input ${n.input} of node ${n.node} (${node.class_type}), which it does not have (${Object.keys(node.inputs).join(', ')})` });
  }
  if (!graph[mapping.output]) out.push({ field: 'output', problem: `names node ${mapping.output}, which the workflow does not have` });
  return out;
}

/** Reads and checks one route key's workflow and mapping; throws a WorkflowError naming the file and the field. */
export function loadWorkflow(dir: string, key: string): Workflow {
  const files = { graph: path.join(dir, `${key}.json`), mapping: path.join(dir, `${key}.mapping.json`) };
  const rawMapping = readJson(files.mapping);
  const m = mappingSchema.safeParse(rawMapping);
  if (!m.success) {
    const issue = m.error.issues[0]!;
    throw new WorkflowError(files.mapping, issue.path.join('.') || '(the whole file)', issue.message);
  }
  const rawGraph = readJson(files.graph);
  const g = graphSchema.safeParse(rawGraph);
  if (!g.success) {
    const issue = g.error.issues[0]!;
    const hint = rawGraph && typeof rawGraph === 'object' && 'nodes' in rawGraph && 'links' in rawGraph ? ' (this is the UI format: export the workflow in API format)' : '';
    throw new WorkflowError(files.graph, issue.path.join('.') || '(the whole file)', `${issue.message}${hint}`);
  }
  const graph = g.data as Graph;
  const mapping = m.data;
  if (mapping.kind === 'video' && !mapping.video) throw new WorkflowError(files.mapping, 'video', 'is required for a video workflow (fps, frames_multiple_of, frames_plus)');
  const problem = graphProblems(graph, mapping)[0];
  if (problem) throw new WorkflowError(problem.field.startsWith('node ') ? files.graph : files.mapping, problem.field, problem.problem);
  return { key, graph, mapping, files };
}

/** The route keys the folder has a workflow for (each `<key>.mapping.json`). */
export function workflowKeys(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    throw new WorkflowError(dir, '', 'is not a folder that can be read');
  }
  return names.filter((n) => n.endsWith('.mapping.json')).map((n) => n.slice(0, -'.mapping.json'.length)).sort();
}

const round = (n: number, multiple: number) => Math.max(multiple, Math.round(n / multiple) * multiple);

/**
 * Width and height for a request: an image's long side is its resolution's (1k 1024...), a
 * video's short side is its resolution's number (720p: 720); the mapping's max_long_side scales
 * both down, and each side is rounded to its multiple_of.
 */
export function frameSize(mapping: Mapping, params: Record<string, unknown>): { width: number; height: number } {
  const ratio = parseAspectRatio(String(params.aspect_ratio ?? '1:1')) ?? { width: 1, height: 1 };
  const landscape = ratio.width >= ratio.height;
  const r = Math.max(ratio.width, ratio.height) / Math.min(ratio.width, ratio.height);
  let long: number;
  if (mapping.kind === 'image') long = IMAGE_LONG_SIDE[params.resolution as ImageResolution] ?? 1024;
  else long = (Number.parseInt(String(params.resolution ?? ''), 10) || 480) * r;
  if (mapping.size.max_long_side) long = Math.min(long, mapping.size.max_long_side);
  const short = long / r;
  const [w, h] = landscape ? [long, short] : [short, long];
  return { width: round(w, mapping.size.multiple_of), height: round(h, mapping.size.multiple_of) };
}

/** The frame count for a duration: fps * seconds, fitted to n * frames_multiple_of + frames_plus (at most max_frames). */
export function frameCount(video: NonNullable<Mapping['video']>, seconds: number): number {
  const wanted = Math.max(1, Math.round(seconds * video.fps));
  const n = Math.max(1, Math.round((wanted - video.frames_plus) / video.frames_multiple_of));
  let count = n * video.frames_multiple_of + video.frames_plus;
  if (video.max_frames && count > video.max_frames) count = Math.floor((video.max_frames - video.frames_plus) / video.frames_multiple_of) * video.frames_multiple_of + video.frames_plus;
  return Math.max(1, count);
}

/** What is put into a workflow for one request. */
export interface Filling {
  prompt: string;
  params: Record<string, unknown>;
  seed: number;
  /** The names ComfyUI gave the uploaded files, in the mapping's order. */
  images: string[];
  video?: string;
  audio?: string;
}

/** A copy of the workflow's graph with our fields in the inputs its mapping names. */
export function fillGraph(w: Workflow, f: Filling): Graph {
  const graph = structuredClone(w.graph);
  const set = (n: NodeInput | undefined, value: unknown) => {
    if (n) graph[n.node]!.inputs[n.input] = value;
  };
  const { inputs, video } = w.mapping;
  set(inputs.prompt, f.prompt);
  set(inputs.negative_prompt, w.mapping.negative_prompt);
  const size = frameSize(w.mapping, f.params);
  set(inputs.width, size.width);
  set(inputs.height, size.height);
  set(inputs.seed, f.seed);
  set(inputs.batch_size, Math.max(1, Number(f.params.quantity ?? 1)));
  if (video) {
    set(inputs.frames, frameCount(video, Number(f.params.duration ?? 1)));
    set(inputs.frame_rate, video.fps);
  }
  inputs.images.forEach((n, i) => set(n, f.images[i]));
  set(inputs.video, f.video);
  set(inputs.audio, f.audio);
  return graph;
}
