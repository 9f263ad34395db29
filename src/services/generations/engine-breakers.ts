import { findOpenBreakers, recordSubmitFailure, recordSubmitSuccess } from '../../repositories/engine-breakers.ts';
import type { Deps } from '../deps.ts';

/**
 * A circuit breaker per upstream provider, kept in Postgres so that every worker shares it and
 * operators can read it: after ENGINE_BREAKER_FAILURES consecutive submit failures (its key, rate
 * limits, 5xx, timeouts) the provider is skipped for ENGINE_BREAKER_COOLDOWN_SECONDS; then submits
 * go through again (half-open): an accepted job closes it, the next failure opens it again.
 */
export function createEngineBreakers({ db, config, log }: Pick<Deps, 'db' | 'config' | 'log'>) {
  const { failures, cooldownSeconds } = config.upstream.breaker;
  return {
    async failed(provider: string, error: string): Promise<void> {
      const row = await recordSubmitFailure(db, provider, error.slice(0, 500), failures, cooldownSeconds);
      if (row.consecutive_failures === failures) log.error({ provider, open_until: row.open_until }, `${provider} failed ${failures} submits in a row: skipped until its breaker closes`);
    },
    accepted: (provider: string): Promise<void> => recordSubmitSuccess(db, provider),
    /** The providers among `names` whose breaker is open now, with the time it closes. */
    async openAmong(names: readonly string[]): Promise<Map<string, Date>> {
      return new Map((await findOpenBreakers(db, names)).map((r) => [r.provider, r.open_until!]));
    },
  };
}
