import { GENERATION_OPERATIONS, IMAGE_MODELS, OPERATION_KINDS, VIDEO_MODELS, type GenerationKind, type GenerationOperation } from './generation-types.ts';
import { LIPSYNC_MODELS } from './video-inputs.ts';

/** The built-in engine: it draws the prompt's words on a gradient (a demo of the pipeline, not AI). */
export const DEMO_ENGINE = 'local';

/** The models a request of each operation names (always one: required or defaulted), which a model route key can send elsewhere. */
const MODELS_OF: { readonly [O in GenerationOperation]: readonly string[] } = {
  'talking-avatar': LIPSYNC_MODELS,
  'ai-video': VIDEO_MODELS,
  'swap-avatar': [],
  localize: [],
  'video-edit': [],
  'text-to-image': IMAGE_MODELS,
  'product-shots': [],
  'image-edit': IMAGE_MODELS,
};

export interface ModelEngines {
  model: string;
  /** The engines tried, in order. */
  engines: string[];
  demo: boolean;
}

export interface OperationEngines {
  operation: GenerationOperation;
  kind: GenerationKind;
  /** The engines a request of this operation goes to, in the order they are tried, unless its model has a route of its own. */
  engines: string[];
  /** Some request of this operation is drawn by the demo renderer first (its route, or the route of one of its models, starts with it). */
  demo: boolean;
  /** The demo renderer is the last resort of a route that starts with a provider: it draws when every provider before it refused. */
  demo_fallback: boolean;
  /** The models whose route differs from the operation's. */
  models: ModelEngines[];
}

const startsWithDemo = (chain: readonly string[]) => chain[0] === DEMO_ENGINE;
const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Which engine makes what, per operation, from the routes as the engine registry reads them
 * (`routes()`: a model key wins over an operation key, `*` takes the rest, and without `*` the
 * built-in engine does). Pure: the start banner, /healthz, `adforge engines` and the dashboard all
 * say what this answers.
 */
export function whoMakesWhat(routes: ReadonlyArray<{ key: string; engines: readonly string[] }>): OperationEngines[] {
  const table = new Map(routes.map((r) => [r.key, [...r.engines]]));
  const fallback = table.get('*') ?? [DEMO_ENGINE];
  return GENERATION_OPERATIONS.map((operation): OperationEngines => {
    const engines = table.get(operation) ?? fallback;
    const models = MODELS_OF[operation]
      .filter((m) => table.has(m) && !same(table.get(m)!, engines))
      .map((model) => ({ model, engines: table.get(model)!, demo: startsWithDemo(table.get(model)!) }));
    // A request of an operation with models always names one (the input schemas require it or set a default).
    const all = MODELS_OF[operation];
    const chains = all.length ? all.map((m) => table.get(m) ?? engines) : [engines];
    return {
      operation,
      kind: OPERATION_KINDS[operation],
      engines,
      demo: chains.some(startsWithDemo),
      demo_fallback: chains.some((c) => !startsWithDemo(c) && c.includes(DEMO_ENGINE)),
      models,
    };
  });
}

/** True when some request of some operation is drawn by the demo renderer. */
export const anyDemo = (plan: ReadonlyArray<{ demo: boolean }>): boolean => plan.some((o) => o.demo);

/** How to go from the demo renderer to real AI. */
export const DEMO_NEXT_STEP =
  'For real AI, set a provider key and ENGINE_ROUTES (docs/providers.md), or run open models on your own GPU through a ComfyUI server (docs/gpu.md).';

/** The operators' one-line how-to, wherever the demo renderer is named. */
export const DEMO_HOW_TO = `The built-in "local" engine is a demo: it draws the prompt's words on a gradient, it is not AI. ${DEMO_NEXT_STEP}`;

/** One line per operation, as the start banner and `adforge engines` print them. */
export function describePlan(plan: readonly OperationEngines[]): string[] {
  const width = Math.max(...plan.map((o) => o.operation.length));
  return plan.map((o) => {
    const chain = o.engines.map((e) => (e === DEMO_ENGINE ? 'local (demo, not AI)' : e)).join(' → ');
    const extra = o.models.map((m) => `${m.model}: ${m.engines.map((e) => (e === DEMO_ENGINE ? 'local (demo)' : e)).join(' → ')}`);
    return `${o.operation.padEnd(width)}  ${chain}${extra.length ? `  (${extra.join('; ')})` : ''}`;
  });
}
