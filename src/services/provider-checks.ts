import { isReady, type CheckOutcome, type CheckResult, type ProviderProbe } from '../adapters/provider-check.ts';
import type { EngineRegistry, RouteLifecycle } from '../adapters/engines/registry.ts';
import { lifecycleWords, type LifecycleStatus } from '../adapters/engines/lifecycle.ts';
import { isUpstreamEngine, type Engine } from '../adapters/engines/engine-contract.ts';

export interface RouteCheck {
  /** The ENGINE_ROUTES key (a model of ours, an operation, or `*`). */
  route: string;
  provider: string;
  outcome: CheckOutcome;
  /** The provider's own words for the worst of what was found. */
  detail: string;
  /** What was checked for this route: the provider's models, endpoints, templates. */
  targets: CheckResult[];
  /** Each of our names the route sends to this provider, with its lifecycle from the provider's table in adforge. */
  lifecycle: LifecycleReport[];
}

export interface LifecycleReport {
  /** Our model (or an operation that takes none). */
  name: string;
  /** The provider's model or endpoint it uses. */
  id: string;
  status: LifecycleStatus;
  date: string;
  shutdown?: string;
  source: string;
  successor?: string;
  /** True when it stops the start; a retired model the route covers among live ones is refused at create instead. */
  stops: boolean;
  /** For a retired one: the live way to make it instead, or that there is none. */
  instead?: string;
}

export interface ProvidersReport {
  ok: boolean;
  routes: RouteCheck[];
  /** Providers outside ENGINE_ROUTES that the configuration uses (speech, the ad library source). */
  others: Array<{ provider: string; outcome: CheckOutcome; detail: string; targets: CheckResult[] }>;
}

// Which finding a route reports when it has several: the one an operator must act on first.
const SEVERITY: Record<CheckOutcome, number> = { ok: 0, deprecated: 1, failed: 2, unreachable: 3, model_gone: 4, key_refused: 5, retired: 6 };
const worst = (results: readonly CheckResult[]): CheckResult | undefined =>
  results.reduce<CheckResult | undefined>((w, r) => (!w || SEVERITY[r.outcome] > SEVERITY[w.outcome] ? r : w), undefined);

/** A provider's check, never thrown: a check that breaks is itself a finding. */
async function safeCheck(probe: Pick<ProviderProbe, 'check'>, targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
  try {
    return await probe.check(targets, signal);
  } catch (e) {
    const detail = signal.aborted ? 'did not answer in time' : e instanceof Error ? e.message : String(e);
    return [{ target: 'key', outcome: signal.aborted ? 'unreachable' : 'failed', detail }];
  }
}

/**
 * What `adforge providers check` reports: for every route of ENGINE_ROUTES and each provider it
 * names, whether the key is accepted and each model or endpoint the route may use still exists,
 * asked of the provider with reads that cost nothing (each provider once, for all its routes).
 * Each routed model's lifecycle comes from its provider's table: a retired one that stops the
 * start makes the route `retired`, a deprecated one `deprecated` (still ready), without asking.
 */
export async function checkProviders(o: { engines: EngineRegistry; probes?: readonly ProviderProbe[]; timeoutMs?: number }): Promise<ProvidersReport> {
  const signal = AbortSignal.timeout(o.timeoutMs ?? 30_000);
  const pairs: Array<{ route: string; engine: Engine }> = [];
  for (const { key, engines } of o.engines.routes()) {
    for (const name of engines) {
      const engine = o.engines.byName(name);
      if (engine && isUpstreamEngine(engine)) pairs.push({ route: key, engine });
    }
  }
  const byProvider = new Map<Engine, Set<string>>();
  for (const { route, engine } of pairs) {
    const set = byProvider.get(engine) ?? new Set<string>();
    for (const t of engine.targets?.(route) ?? []) set.add(t);
    byProvider.set(engine, set);
  }
  const answers = new Map<Engine, CheckResult[]>(
    await Promise.all(
      [...byProvider].map(async ([engine, targets]): Promise<[Engine, CheckResult[]]> => [
        engine,
        engine.check ? await safeCheck({ check: engine.check.bind(engine) }, [...targets], signal) : [{ target: 'key', outcome: 'failed', detail: `the ${engine.name} adapter has no free check` }],
      ]),
    ),
  );
  const lifecycle = o.engines.lifecycle();
  const routes = pairs.map(({ route, engine }): RouteCheck => {
    const all = answers.get(engine) ?? [];
    const key = all.find((r) => r.target === 'key');
    const mine = new Set(engine.targets?.(route) ?? []);
    const targets = all.filter((r) => r.target !== 'key' && mine.has(r.target));
    const met = lifecycle.filter((f) => f.route === route && f.provider === engine.name);
    // What the table says of a target replaces what the provider's read said, unless the read found worse (one finding per target).
    const fromTable = met.flatMap(lifecycleFinding);
    const worse = (a: CheckResult, b: CheckResult) => SEVERITY[a.outcome] > SEVERITY[b.outcome];
    const findings: CheckResult[] = [
      ...(key ? [key] : []),
      ...targets.filter((t) => !fromTable.some((f) => f.target === t.target && !worse(t, f))),
      ...fromTable.filter((f) => !targets.some((t) => t.target === f.target && worse(t, f))),
    ];
    const w = worst(findings);
    const outcome = w?.outcome ?? 'ok';
    return { route, provider: engine.name, outcome, detail: outcome === 'ok' ? (key?.detail ?? 'ok') : w!.detail, targets: findings.filter((f) => f.target !== 'key'), lifecycle: met.map(report) };
  });
  const others = await Promise.all(
    (o.probes ?? []).map(async (probe) => {
      const results = await safeCheck(probe, [], signal);
      const w = worst(results);
      return { provider: probe.name, outcome: w?.outcome ?? 'ok', detail: w?.detail ?? 'ok', targets: results.filter((r) => r.target !== 'key') };
    }),
  );
  return { ok: [...routes, ...others].every((r) => isReady(r.outcome)), routes, others };
}

/** A lifecycle finding as a check's finding: a retired one that stops the start, or a deprecated one. */
function lifecycleFinding(f: RouteLifecycle): CheckResult[] {
  if (f.stops) return [{ target: f.entry.id, outcome: 'retired', detail: `${lifecycleWords(f)}; ${f.instead}` }];
  if (f.status === 'deprecated') return [{ target: f.entry.id, outcome: 'deprecated', detail: lifecycleWords(f) }];
  return [];
}

function report(f: RouteLifecycle): LifecycleReport {
  const { entry } = f;
  return {
    name: f.name,
    id: entry.id,
    status: f.status,
    date: f.date,
    ...(entry.shutdown ? { shutdown: entry.shutdown } : {}),
    source: entry.source,
    ...(entry.successor ? { successor: entry.successor } : {}),
    stops: f.stops,
    ...(f.instead ? { instead: f.instead } : {}),
  };
}
