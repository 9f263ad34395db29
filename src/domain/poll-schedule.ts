/**
 * When a job waiting on a provider is looked at again (issue 31): pure rules, no I/O.
 *
 * A provider's poll budget is one or more windows, `requests` reads every `perMs` (e.g. 10 a
 * second and 600 a minute). Reads are spaced evenly at the strictest window's pace: a read every
 * `perMs / requests` ms of the strictest window keeps every window within its count, whatever the
 * number of jobs, and needs only one shared timestamp per provider (no count of live jobs).
 */
export type PollBudget = readonly Readonly<{ requests: number; perMs: number }>[];

/** The least time between two reads of one provider, over every job and worker process. */
export function pollSpacingMs(budget: PollBudget): number {
  return Math.max(1, ...budget.map((w) => Math.ceil(w.perMs / Math.max(1, w.requests))));
}

export interface PollPace {
  /** UPSTREAM_POLL_MS: a young job's pace. */
  pollMs: number;
  /** UPSTREAM_POLL_MAX_MS: the longest wait between two looks at a job that has no webhook. */
  maxMs: number;
  /** UPSTREAM_HOOKED_POLL_MS: the safety net's pace for a job whose provider will call back. */
  hookedMs: number;
}

/**
 * How long a job waits before its next look, from its age: UPSTREAM_POLL_MS while it is young,
 * then a tenth of its age (a job that has run ten minutes is looked at every minute, so the time
 * from the provider finishing to us noticing stays within a tenth of the job's run), capped at
 * UPSTREAM_POLL_MAX_MS. A job whose provider calls back is finished by the webhook: its polls are
 * only a safety net against a lost delivery, at least UPSTREAM_HOOKED_POLL_MS apart.
 */
export function pollDelayMs(ageMs: number, pace: PollPace, hooked: boolean): number {
  const byAge = Math.min(Math.max(pace.maxMs, pace.pollMs), Math.max(pace.pollMs, Math.floor(Math.max(0, ageMs) / 10)));
  return hooked ? Math.max(byAge, pace.hookedMs) : byAge;
}

/** After a failed look (a 5xx, a reset): doubling from UPSTREAM_POLL_MS with each look so far, at most a minute, never sooner than the age rule. */
export function retryDelayMs(polls: number, ageMs: number, pace: PollPace): number {
  return Math.max(Math.min(60_000, pace.pollMs * 2 ** Math.min(polls, 6)), pollDelayMs(ageMs, pace, false));
}
