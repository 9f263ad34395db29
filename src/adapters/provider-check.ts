/*
 * What `adforge providers check` asks each provider: only reads that cost nothing (model lists,
 * account reads, template and language lists, a status read of a job that does not exist).
 */
/** `deprecated`: it still runs, but its provider announced its end (the route is ready; plan a new one). */
export type CheckOutcome = 'ok' | 'deprecated' | 'key_refused' | 'model_gone' | 'retired' | 'unreachable' | 'failed';

/** The outcomes a ready route may have. */
export const isReady = (outcome: CheckOutcome): boolean => outcome === 'ok' || outcome === 'deprecated';

export interface CheckResult {
  /** What was checked, in the provider's own names: `key`, a model, an endpoint, a template. */
  target: string;
  outcome: CheckOutcome;
  /** The provider's own words (its error message, the status it gave), or what was found. */
  detail: string;
}

/** A provider that can be checked for free: its key, then each of the targets it is given. */
export interface ProviderProbe {
  readonly name: string;
  check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]>;
}
