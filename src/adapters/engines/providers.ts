import type { z } from 'zod';
import { comfyuiProvider } from './comfyui/provider.ts';
import { falProvider } from './fal/provider.ts';
import { geminiProvider } from './gemini/provider.ts';
import { heygenProvider } from './heygen/provider.ts';
import { openaiProvider } from './openai/provider.ts';
import type { ProviderModule } from './provider.ts';
import { submagicProvider } from './submagic/provider.ts';
import { syncProvider } from './sync/provider.ts';

/**
 * Every provider adforge knows: adding one is its folder and a line here. The order is the order
 * their engines are listed (engine status, `adforge providers check`, a route's error message).
 */
export const PROVIDERS = [submagicProvider, syncProvider, heygenProvider, geminiProvider, openaiProvider, falProvider, comfyuiProvider] as const;

type Provider = (typeof PROVIDERS)[number];
type SettingsOf<P extends Provider> = ReturnType<P['settings']>;

/** Each provider's settings by name (Config.upstream.<name>): undefined while its key is unset. */
export type ProviderSettings = { readonly [P in Provider as P['name']]: Readonly<SettingsOf<P>> | undefined };

/** The variables every provider reads, for the configuration's schema. */
export const providerVariables = (): z.ZodRawShape => Object.assign({}, ...PROVIDERS.map((p) => p.env));

/** The list as modules of any provider (each one's own types set aside). */
export const PROVIDER_MODULES = PROVIDERS as unknown as readonly ProviderModule[];

/** Each provider's settings from the parsed environment: made for those whose key is set. */
export function providerSettings(env: Record<string, unknown>): ProviderSettings {
  const out: Record<string, unknown> = {};
  for (const p of PROVIDER_MODULES) out[p.name] = env[p.keyVariable] ? Object.freeze(p.settings(env)) : undefined;
  return out as ProviderSettings;
}

/** The module of a provider named in ENGINE_ROUTES, if adforge knows it. */
export const providerNamed = (name: string): ProviderModule | undefined => PROVIDER_MODULES.find((p) => p.name === name);
