import { providerNamed } from './providers.ts';
import { isUpstreamEngine, type Engine } from './engine-contract.ts';

/** The model a route names for a request: `model`, or a talking avatar's `lipsync_model`. */
export const routeModel = (params: Record<string, unknown>): unknown => params.model ?? params.lipsync_model;

/**
 * Which engines make what: routes are `key=engine[|engine...]` pairs where the key is a model of
 * the request (a spec model name, or a talking avatar's lipsync_model) or an operation, `*` for
 * the rest; a model key wins over an operation key. A route lists providers in the order they are
 * tried (fail-over happens only before one accepts the job). A route naming a provider whose key
 * is not set, or no known engine at all, is a configuration error at start, not at run time.
 */
export function createEngineRegistry(engines: Engine[], routes: string | undefined, o: { allowRetired?: boolean } = {}) {
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
  const chainFor = (route: { model?: unknown; operation: string }): Engine[] =>
    (typeof route.model === 'string' ? table.get(route.model) : undefined) ?? table.get(route.operation) ?? fallback;
  // A model its provider retired fails every request sent there, after the customer was charged: it stops the start instead
  // (`providers check` builds the routes anyway, to report them).
  const retirements = engines.filter(isUpstreamEngine).flatMap((e) => Object.entries(e.retired ?? {}).map(([model, r]) => ({ provider: e.name, model, since: r.since, instead: r.instead, operation: r.operation })));
  const keyOf = (model: string, operation: string) => (table.has(model) ? model : table.has(operation) ? operation : '*');
  const retiredRoutes = retirements
    .filter((r) => chainFor({ model: r.model, operation: r.operation }).some((e) => e.name === r.provider))
    .map(({ provider, model, since, instead, operation }) => ({ key: keyOf(model, operation), provider, model, since, instead }));
  const first = retiredRoutes[0];
  if (first && !o.allowRetired) {
    throw new Error(`invalid configuration: ENGINE_ROUTES sends ${first.model} to ${first.provider}, which retired it on ${first.since}; route it to ${first.instead} instead (${first.model}=${first.instead})`);
  }
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
    /** Models the configured providers have retired (none of them is routed there: the start checked). */
    retirements: () => retirements.map(({ provider, model, since, instead }) => ({ provider, model, since, instead })),
    /** Routes that send a retired model to the provider that retired it: the route key that does it (empty unless allowRetired). */
    retiredRoutes: () => retiredRoutes,
    /**
     * Why the route cannot make this request (a 400 at create), or undefined: it is accepted when
     * some engine of the route can make it; otherwise the first engine's reason is given.
     */
    refusal(operation: string, params: Record<string, unknown>, attachedImages = 0): string | undefined {
      const reasons = chainFor({ model: routeModel(params), operation }).map((e) => e.refuse(operation as never, params, attachedImages));
      return reasons.includes(undefined) ? undefined : reasons[0];
    },
  };
}
export type EngineRegistry = ReturnType<typeof createEngineRegistry>;
