import { isUpstreamEngine, type Engine } from './engine-contract.ts';
import { judge, namesUnder, type LifecycleFinding, type LifecycleTable } from './lifecycle.ts';

type RoutedEngine = Pick<Engine, 'name' | 'kind' | 'targets'>;

/**
 * The lifecycle of every route: for each route key, each provider of its chain and each of our
 * names the key sends there (the key itself, its operation's models, or all of them for `*`), the
 * worst status of the ids the provider's engine would use for it (its `targets`, under the
 * operator's settings). Pure: the tables are data, `targets` reads only settings.
 *
 * A retired finding stops the start when the route names it (a model key, or an operation that
 * takes no model), or when everything the key sends to that provider is retired: such a route can
 * only fail. A retired model a key covers among live ones is left out of that route instead
 * (`retired`), so its requests are refused at create, before anyone is charged.
 */
export function routeLifecycle(routes: ReadonlyArray<{ key: string; chain: readonly RoutedEngine[] }>, tables: ReadonlyMap<string, LifecycleTable>, today: string) {
  const judged = new Map<string, LifecycleFinding | undefined>();
  const findingAt = (route: string, engine: RoutedEngine, table: LifecycleTable, name: string): LifecycleFinding | undefined => {
    const at = `${engine.name}\u0000${name}`;
    if (!judged.has(at)) judged.set(at, judge(route, table, name, engine.targets?.(name) ?? [], today));
    const f = judged.get(at);
    return f && { ...f, route };
  };

  const findings: LifecycleFinding[] = [];
  const everythingRetired = new Set<string>();
  for (const { key, chain } of routes) {
    for (const engine of chain) {
      const table = tables.get(engine.name);
      if (!table || !isUpstreamEngine(engine)) continue;
      const names = namesUnder(key, table);
      const mine = names.map((name) => findingAt(key, engine, table, name));
      for (const f of mine) if (f) findings.push(f);
      if (mine.length > 0 && mine.every((f) => f?.status === 'retired')) everythingRetired.add(`${key}\u0000${engine.name}`);
    }
  }

  return {
    findings,
    tables: [...tables.values()],
    /** True when this finding stops the start. */
    stops: (f: LifecycleFinding): boolean => f.status === 'retired' && (f.route === f.name || everythingRetired.has(`${f.route}\u0000${f.provider}`)),
    /** The finding that makes this provider drop one of our names from its routes, if it retired it. */
    retired(engine: RoutedEngine, name: string): LifecycleFinding | undefined {
      const table = tables.get(engine.name);
      if (!table || !isUpstreamEngine(engine)) return undefined;
      const f = findingAt('', engine, table, name);
      return f?.status === 'retired' ? f : undefined;
    },
  };
}
