import { PROVIDER_MODULES, providerNamed } from './providers.ts';
import { isUpstreamEngine, type Engine } from './engine-contract.ts';
import { insteadWords, type LifecycleFinding, type LifecycleTable } from './lifecycle.ts';
import { routeLifecycle } from './route-lifecycle.ts';

/** One route's finding at one provider, as `adforge providers check` and the start's warnings read it. */
export type RouteLifecycle = LifecycleFinding & { stops: boolean; instead?: string };

/** Every provider's lifecycle table: the configured engines' own, then the known providers' (for alternatives). */
function tablesFor(engines: readonly Engine[]): Map<string, LifecycleTable> {
  const tables = new Map<string, LifecycleTable>(PROVIDER_MODULES.map((p) => [p.name, p.lifecycle]));
  for (const e of engines) if (e.lifecycle) tables.set(e.name, e.lifecycle);
  return tables;
}

/** The model a route names for a request: `model`, or a talking avatar's `lipsync_model`. */
export const routeModel = (params: Record<string, unknown>): unknown => params.model ?? params.lipsync_model;

/**
 * Which engines make what: routes are `key=engine[|engine...]` pairs where the key is a model of
 * the request (a spec model name, or a talking avatar's lipsync_model) or an operation, `*` for
 * the rest; a model key wins over an operation key. A route lists providers in the order they are
 * tried (fail-over happens only before one accepts the job). A route naming a provider whose key
 * is not set, or no known engine at all, is a configuration error at start, not at run time.
 */
export function createEngineRegistry(engines: Engine[], routes: string | undefined, o: { allowRetired?: boolean; today?: string } = {}) {
  const byName = new Map<string, Engine>(engines.map((e) => [e.name, e]));
  const table = new Map<string, Engine[]>();
  for (const pair of (routes ?? '*=local').split(',').map((s) => s.trim()).filter(Boolean)) {
    const [target, names] = pair.split('=').map((s) => s.trim());
    const chain: Engine[] = [];
    for (const name of (names ?? '').split('|').map((s) => s.trim())) {
      const engine = name ? byName.get(name) : undefined;
      const known = name && !engine ? providerNamed(name) : undefined;
      if (known) {
        throw new Error(`invalid configuration: ENGINE_ROUTES entry "${pair}" routes to ${name}, which needs ${known.keyVariable}`);
      }
      if (!engine) throw new Error(`invalid configuration: ENGINE_ROUTES entry "${pair}" names no known engine (${[...byName.keys()].join(', ')})`);
      if (chain.includes(engine)) throw new Error(`invalid configuration: ENGINE_ROUTES entry "${pair}" names ${name} twice`);
      chain.push(engine);
    }
    if (!target || chain.length === 0) throw new Error(`invalid configuration: ENGINE_ROUTES entry "${pair}" is not key=engine`);
    const local = chain.findIndex((e) => !isUpstreamEngine(e));
    if (local !== -1 && local !== chain.length - 1) throw new Error(`invalid configuration: ENGINE_ROUTES entry "${pair}": local can only be the last resort of a route`);
    table.set(target, chain);
  }
  const fallbackEngine = byName.get('local');
  const fallback = table.get('*') ?? (fallbackEngine ? [fallbackEngine] : undefined);
  if (!fallback) throw new Error('invalid configuration: ENGINE_ROUTES has no "*" route and no local engine exists');
  const today = o.today ?? new Date().toISOString().slice(0, 10);
  const lifecycle = routeLifecycle([...table.entries()].map(([key, chain]) => ({ key, chain })), tablesFor(engines), today);
  const fatal = lifecycle.findings.filter((f) => lifecycle.stops(f));
  const first = fatal[0];
  if (first && !o.allowRetired) {
    const through = first.route === first.name ? '' : ` (its route ${first.route})`;
    throw new Error(`invalid configuration: ENGINE_ROUTES sends ${first.name} to ${first.provider}${through}, which retired ${first.entry.id} on ${first.date} (${first.entry.source}); ${insteadWords(first, lifecycle.tables, today)}`);
  }
  // A model a route covers through its operation (or `*`) at a provider that retired it is left out
  // of that route: refused at create when no other provider of the route makes it.
  const retiredAt = (engine: Engine, name: unknown): LifecycleFinding | undefined =>
    o.allowRetired || typeof name !== 'string' ? undefined : lifecycle.retired(engine, name);
  const routedChain = (route: { model?: unknown; operation: string }): Engine[] =>
    (typeof route.model === 'string' ? table.get(route.model) : undefined) ?? table.get(route.operation) ?? fallback;
  const chainFor = (route: { model?: unknown; operation: string }): Engine[] => routedChain(route).filter((e) => !retiredAt(e, route.model ?? route.operation));
  return {
    /** The providers of a request's route, in the order they are tried. */
    chainFor,
    /** The first engine of a request's route. */
    engineFor: (route: { model?: unknown; operation: string }): Engine => chainFor(route)[0]!,
    /** A configured engine by name (an upstream job is finished by the provider that started it). */
    byName: (name: string): Engine | undefined => byName.get(name),
    /** Every route as operators read it: key and the engine names in order. */
    routes: (): Array<{ key: string; engines: string[] }> => [...table.entries()].map(([key, chain]) => ({ key, engines: chain.map((e) => e.name) })),
    providers: (): Engine[] => engines.filter(isUpstreamEngine),
    /**
     * What each route meets at each of its providers, by the providers' lifecycle tables: every one
     * of our names it sends there that the table knows, with `stops` true for those that stop the
     * start (reported, not thrown, with allowRetired) and `instead` a live alternative for a retired one.
     */
    lifecycle: (): RouteLifecycle[] =>
      lifecycle.findings.map((f) => ({ ...f, stops: lifecycle.stops(f), ...(f.status === 'retired' ? { instead: insteadWords(f, lifecycle.tables, today) } : {}) })),
    /**
     * Why the route cannot make this request (a 400 at create), or undefined: it is accepted when
     * some engine of the route can make it; otherwise the first engine's reason is given.
     */
    refusal(operation: string, params: Record<string, unknown>, attachedImages = 0): string | undefined {
      const route = { model: routeModel(params), operation };
      const chain = chainFor(route);
      if (chain.length === 0) {
        // Every provider of the route retired it (the chain is never empty otherwise).
        const gone = routedChain(route).map((e) => retiredAt(e, route.model ?? operation)).find((f) => f !== undefined)!;
        const field = params.model !== undefined ? 'model: ' : params.lipsync_model !== undefined ? 'lipsync_model: ' : '';
        return `${field}${gone.name} is no longer made by ${gone.provider}, which retired it on ${gone.date}`;
      }
      const reasons = chain.map((e) => e.refuse(operation as never, params, attachedImages));
      return reasons.includes(undefined) ? undefined : reasons[0];
    },
  };
}
export type EngineRegistry = ReturnType<typeof createEngineRegistry>;
