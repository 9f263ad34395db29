import type { EngineRegistry } from '../adapters/engines/registry.ts';
import { inFlightByProvider, listBreakers } from '../repositories/engine-breakers.ts';
import { whoMakesWhat, type OperationEngines } from '../domain/who-makes-what.ts';
import type { Deps } from './deps.ts';

export interface ProviderStatus {
  name: string;
  /** closed: in use; open: skipped until `open_until`; half-open: resting time over, the next submit decides. */
  breaker: 'closed' | 'open' | 'half-open';
  consecutive_failures: number;
  open_until: string | null;
  last_error: string | null;
  in_flight: number;
}

/** What operators read with `adforge engines --json`: routes, who makes each operation (and whether it is the demo renderer), providers, breakers, jobs in flight. */
export function createEngineStatus({ db, config }: Pick<Deps, 'db' | 'config'>, engines: Pick<EngineRegistry, 'routes' | 'providers'>) {
  // Routes are fixed at start: who makes what is computed once.
  const operations = whoMakesWhat(engines.routes());
  return {
    /** Which engine makes each operation, and whether it is the built-in demo renderer (no secret in it: /healthz shows it). */
    operations: (): OperationEngines[] => operations,
    async status(): Promise<{ routes: Array<{ key: string; engines: string[] }>; operations: OperationEngines[]; providers: ProviderStatus[]; breaker: { failures: number; cooldown_seconds: number } }> {
      const [rows, inFlight] = await Promise.all([listBreakers(db), inFlightByProvider(db)]);
      const now = Date.now();
      const providers = engines.providers().map((e): ProviderStatus => {
        const b = rows.find((r) => r.provider === e.name);
        const open = b?.open_until ? b.open_until.getTime() > now : false;
        const state = open ? 'open' : b && b.consecutive_failures >= config.upstream.breaker.failures ? 'half-open' : 'closed';
        return {
          name: e.name,
          breaker: state,
          consecutive_failures: b?.consecutive_failures ?? 0,
          open_until: b?.open_until?.toISOString() ?? null,
          last_error: b?.last_error ?? null,
          in_flight: inFlight[e.name] ?? 0,
        };
      });
      return { routes: engines.routes(), operations, providers, breaker: { failures: config.upstream.breaker.failures, cooldown_seconds: config.upstream.breaker.cooldownSeconds } };
    },
  };
}
