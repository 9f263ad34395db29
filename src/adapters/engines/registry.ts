import type { Engine } from './engine.ts';
import { isUpstreamEngine, type UpstreamEngine } from './upstream.ts';

export type AnyEngine = (Engine & { kind?: 'local' }) | UpstreamEngine;

/** The providers adforge knows, with the variable that turns each on. */
const PROVIDER_KEYS: Readonly<Record<string, string>> = { fal: 'FAL_KEY', openai: 'OPENAI_API_KEY', gemini: 'GEMINI_API_KEY', heygen: 'HEYGEN_API_KEY', sync: 'SYNC_API_KEY', submagic: 'SUBMAGIC_API_KEY' };

/** The model a route names for a request: `model`, or a talking avatar's `lipsync_model`. */
export const routeModel = (params: Record<string, unknown>): unknown => params.model ?? params.lipsync_model;

/**
 * Which engine makes what: routes are `key=engine` pairs where the key is a model of the request
 * (a spec model name) or an operation, `*` for the rest; a model key wins over an operation key.
 * A route naming a provider whose key is not set, or no known engine at all, is a configuration
 * error at start, not at run time.
 */
export function createEngineRegistry(engines: AnyEngine[], routes: string | undefined) {
  const byName = new Map<string, AnyEngine>(engines.map((e) => [e.name, e]));
  const table = new Map<string, AnyEngine>();
  for (const pair of (routes ?? '*=local').split(',').map((s) => s.trim()).filter(Boolean)) {
    const [target, name] = pair.split('=').map((s) => s.trim());
    const engine = name ? byName.get(name) : undefined;
    if (name && !engine && PROVIDER_KEYS[name]) {
      throw new Error(`invalid configuration: ENGINE_ROUTES entry "${pair}" routes to ${name}, which needs ${PROVIDER_KEYS[name]}`);
    }
    if (!target || !engine) throw new Error(`invalid configuration: ENGINE_ROUTES entry "${pair}" names no known engine (${[...byName.keys()].join(', ')})`);
    table.set(target, engine);
  }
  const fallback = table.get('*') ?? byName.get('local');
  if (!fallback) throw new Error('invalid configuration: ENGINE_ROUTES has no "*" route and no local engine exists');
  const engineFor = (route: { model?: unknown; operation: string }): AnyEngine =>
    (typeof route.model === 'string' ? table.get(route.model) : undefined) ?? table.get(route.operation) ?? fallback;
  return {
    engineFor,
    /** A configured engine by name (an upstream job is finished by the provider that started it). */
    byName: (name: string): AnyEngine | undefined => byName.get(name),
    /** Why the routed provider cannot make this request (a 400 at create), or undefined. */
    refusal(operation: string, params: Record<string, unknown>, attachedImages = 0): string | undefined {
      const engine = engineFor({ model: routeModel(params), operation });
      return isUpstreamEngine(engine) ? engine.refuse(operation as never, params, attachedImages) : undefined;
    },
  };
}
export type EngineRegistry = ReturnType<typeof createEngineRegistry>;
