import type { CheckOutcome, CheckResult, ProviderProbe } from '../adapters/provider-check.ts';
import type { EngineRegistry } from '../adapters/engines/registry.ts';
import { isUpstreamEngine, type Engine } from '../adapters/engines/engine-contract.ts';
import { lifecycleWords } from '../adapters/engines/lifecycle.ts';

export interface RouteCheck {
  /** The ENGINE_ROUTES key (a model of ours, an operation, or `*`). */
  route: string;
  provider: string;
  outcome: CheckOutcome;
  /** The provider's own words for the worst of what was found. */
  detail: string;
  /** What was checked for this route: the provider's models, endpoints, templates. */
  targets: CheckResult[];
}

export interface ProvidersReport {
  ok: boolean;
  routes: RouteCheck[];
  /** Providers outside ENGINE_ROUTES that the configuration uses (speech, the ad library source). */
  others: Array<{ provider: string; outcome: CheckOutcome; detail: string; targets: CheckResult[] }>;
}

// Which finding a route reports when it has several: the one an operator must act on first.
const SEVERITY: Record<CheckOutcome, number> = { ok: 0, failed: 1, unreachable: 2, model_gone: 3, key_refused: 4, retired: 5 };
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
 * A route to a model its provider retired is reported as such without asking.
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
  const retired = o.engines.lifecycle().filter((f) => f.stops);
  const routes = pairs.map(({ route, engine }): RouteCheck => {
    const all = answers.get(engine) ?? [];
    const key = all.find((r) => r.target === 'key');
    const mine = new Set(engine.targets?.(route) ?? []);
    const targets = all.filter((r) => r.target !== 'key' && mine.has(r.target));
    const gone = retired.filter((r) => r.route === route && r.provider === engine.name);
    const findings: CheckResult[] = [
      ...(key ? [key] : []),
      ...targets,
      ...gone.map((r): CheckResult => ({ target: r.entry.id, outcome: 'retired', detail: `${lifecycleWords(r)}; ${r.instead}` })),
    ];
    const w = worst(findings);
    const outcome = w?.outcome ?? 'ok';
    return { route, provider: engine.name, outcome, detail: outcome === 'ok' ? (key?.detail ?? 'ok') : w!.detail, targets: findings.filter((f) => f.target !== 'key') };
  });
  const others = await Promise.all(
    (o.probes ?? []).map(async (probe) => {
      const results = await safeCheck(probe, [], signal);
      const w = worst(results);
      return { provider: probe.name, outcome: w?.outcome ?? 'ok', detail: w?.detail ?? 'ok', targets: results.filter((r) => r.target !== 'key') };
    }),
  );
  return { ok: [...routes, ...others].every((r) => r.outcome === 'ok'), routes, others };
}
