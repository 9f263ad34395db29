import type { Config } from '../../config.ts';
import { createLocalEngine } from './local/local-engine.ts';
import { PROVIDERS } from './providers.ts';
import { synthesize } from './speech/tts.ts';
import { createEngineRegistry, type EngineRegistry } from './registry.ts';
import type { Engine } from './engine-contract.ts';
import type { ProviderShared } from './provider.ts';

/**
 * Every engine the config turns on (the local one, and each provider module whose key is set), and
 * the routes between them. An unknown engine or a missing key stops the start. Only the engines
 * turned on are imported.
 */
export async function buildEngines(config: Readonly<Config>, o: { allowRetired?: boolean; log?: ProviderShared['log'] } = {}): Promise<EngineRegistry> {
  const engines: Engine[] = [createLocalEngine({ delayMs: config.localEngineDelayMs, speak: synthesize })];
  const shared: ProviderShared = { allowPrivate: config.allowPrivateNetworkUrls, ...(config.upstream.callTimeoutCapMs ? { callTimeoutCapMs: config.upstream.callTimeoutCapMs } : {}), ...(o.log ? { log: o.log } : {}) };
  for (const provider of PROVIDERS) {
    const settings = config.upstream[provider.name];
    if (!settings) continue;
    const engine = await (provider.create as (s: typeof settings, sh: typeof shared) => Promise<Engine>)(settings, shared);
    // The provider's <NAME>_POLL_BUDGET, read by its module, goes with its engine to the upstream core.
    const budget = (settings as { pollBudget?: Engine['pollBudget'] }).pollBudget;
    engines.push(budget ? { ...engine, pollBudget: budget } : engine);
  }
  return createEngineRegistry(engines, config.engineRoutes, o);
}
