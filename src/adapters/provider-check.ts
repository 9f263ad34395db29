/*
 * What `adforge providers check` asks each provider: only reads that cost nothing (model lists,
 * account reads, template and language lists, a status read of a job that does not exist).
 */
export type CheckOutcome = 'ok' | 'key_refused' | 'model_gone' | 'retired' | 'unreachable' | 'failed';

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
