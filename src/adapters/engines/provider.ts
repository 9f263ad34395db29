import { z } from 'zod';
import type { GenerationOperation } from '../../domain/generation-types.ts';
import type { Engine } from './engine-contract.ts';
import type { PollBudget } from '../../domain/poll-schedule.ts';
import type { LifecycleTable } from './lifecycle.ts';

/**
 * What a provider can make, read from its adapter's contract: the operations it serves, our model
 * names it takes for them (empty: the operation has no model, or any it takes), and the limits its
 * contract puts on one request. Held to the adapter's own `refuse` by test/unit/provider-modules.test.ts.
 */
export interface ProviderMakes {
  readonly operations: readonly GenerationOperation[];
  readonly models: readonly string[];
  readonly limits: Readonly<Record<string, number | string | readonly (string | number)[]>>;
}

/** What every provider's engine gets besides its own settings. */
export interface ProviderShared {
  /** ALLOW_PRIVATE_NETWORK_URLS: the provider's API may sit on a private address (a test fake, a gateway). */
  allowPrivate: boolean;
  /** The service's log, for what a provider answers that the operator must see whole and a user must not (ComfyUI's tracebacks). */
  log?: { warn(obj: object, msg: string): void };
  /** UPSTREAM_CALL_TIMEOUT_SECONDS: caps each provider call's own timeout (unset: each call's, from its provider's documents). */
  callTimeoutCapMs?: number;
}

/**
 * One provider, whole: its name (what ENGINE_ROUTES and `/hooks/<name>` say), the environment
 * variables it reads (with their defaults and parsing), the one variable that turns it on, the
 * settings it makes of them, what it can make, and how its engine is created. The list in
 * providers.ts registers the modules; configuration, routes and the start-up checks read the list.
 */
export interface ProviderModule<Name extends string = string, Shape extends z.ZodRawShape = z.ZodRawShape, Settings = unknown> {
  readonly name: Name;
  /** The variable that turns the provider on: unset, it is off and a route to it stops the start. */
  readonly keyVariable: keyof Shape & string;
  /** Its variables: documented in docs/configuration.md (test/unit/docs-links.test.ts checks). */
  readonly env: Shape;
  /** Its settings from its parsed variables, made only when `keyVariable` is set (Config.upstream[name]). */
  settings(env: z.output<z.ZodObject<Shape>>): Settings;
  readonly makes: ProviderMakes;
  /** The dated lifecycle of its models and endpoints (pure data, shown in docs/providers.md), read without loading its engine. */
  readonly lifecycle: LifecycleTable;
  /**
   * Its engine. The engine's module (with the HTTP client, media and tracing libraries it brings)
   * is imported here, on use: reading the configuration loads no engine (an admin command's start).
   */
  create(settings: Settings, shared: ProviderShared): Promise<Engine>;
}

/** Declares a provider module, its types inferred from its variables. */
export const defineProvider = <const Name extends string, Shape extends z.ZodRawShape, Settings>(m: ProviderModule<Name, Shape, Settings>): ProviderModule<Name, Shape, Settings> => m;

/** `a=b,c=d` (the form of ENGINE_ROUTES) into an object. */
export function parsePairs(raw: string | undefined, ctx: z.RefinementCtx<string | undefined>, separator = ','): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? '').split(separator).map((s) => s.trim()).filter(Boolean)) {
    const i = pair.indexOf('=');
    if (i <= 0 || i === pair.length - 1) ctx.addIssue({ code: 'custom', message: `"${pair}" is not name=value` });
    else out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
  }
  return out;
}

/**
 * `<requests>/<seconds>[,<requests>/<seconds>...]`: a provider's poll budget, one window or more
 * (`10/1,600/60`: 10 a second and 600 a minute), into windows of requests per milliseconds.
 */
export function parseBudget(raw: string, ctx: z.RefinementCtx<string>): PollBudget {
  const windows = raw.split(',').map((part) => {
    const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(part);
    const [requests, seconds] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
    if (requests < 1 || seconds < 1) ctx.addIssue({ code: 'custom', message: `"${part.trim()}" is not <requests>/<seconds>, both at least 1` });
    return Object.freeze({ requests: Math.max(1, requests), perMs: Math.max(1, seconds) * 1000 });
  });
  return Object.freeze(windows);
}

/** A provider's poll budget variable with its default (docs/providers.md says where each default comes from). */
export const budgetVariable = (fallback: string) => z.string().default(fallback).transform(parseBudget);

/** A provider's `name=value` map variable (models, templates, endpoints), unset being empty. */
export const pairsVariable = (separator = ',') => z.string().optional().transform((raw, ctx) => parsePairs(raw, ctx, separator));
