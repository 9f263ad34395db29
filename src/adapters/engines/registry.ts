import type { Engine } from './engine.ts';

/**
 * Which engine renders what: routes are `model=engine` pairs (the model of the request, or the
 * operation for requests without one), `*` for the rest. Only `local` exists until upstream
 * adapters are added; an unknown engine name is a configuration error at start, not at run time.
 */
export function createEngineRegistry(engines: Engine[], routes: string | undefined) {
  const byName = new Map(engines.map((e) => [e.name, e]));
  const table = new Map<string, Engine>();
  for (const pair of (routes ?? '*=local').split(',').map((s) => s.trim()).filter(Boolean)) {
    const [target, name] = pair.split('=').map((s) => s.trim());
    const engine = name ? byName.get(name) : undefined;
    if (!target || !engine) throw new Error(`invalid configuration: ENGINE_ROUTES entry "${pair}" names no known engine (${[...byName.keys()].join(', ')})`);
    table.set(target, engine);
  }
  const fallback = table.get('*') ?? byName.get('local');
  if (!fallback) throw new Error('invalid configuration: ENGINE_ROUTES has no "*" route and no local engine exists');
  return {
    engineFor(route: { model?: unknown; operation: string }): Engine {
      return (typeof route.model === 'string' ? table.get(route.model) : undefined) ?? table.get(route.operation) ?? fallback;
    },
  };
}
export type EngineRegistry = ReturnType<typeof createEngineRegistry>;
