import { request, type Dispatcher } from 'undici';
import type { CheckOutcome, CheckResult } from '../provider-check.ts';
import { jsonOrUndefined, readAtMost } from './read-at-most.ts';
import { isBlockedAddressError } from './safe-dispatcher.ts';

/** A provider's answer to a read of `providers check`, or why there was none. */
export type FreeRead = { status: number; json: unknown } | { unreachable: string };

/**
 * One GET that costs nothing (a model list, an account read, a status read of an unknown job),
 * never thrown: what the provider answered, its JSON if it was JSON, or why it could not be asked.
 */
export async function freeRead(o: {
  provider: string;
  url: string;
  headers: Record<string, string>;
  dispatcher: Dispatcher;
  signal: AbortSignal;
  timeoutMs?: number;
  maxBytes?: number;
}): Promise<FreeRead> {
  try {
    const res = await request(o.url, {
      method: 'GET',
      dispatcher: o.dispatcher,
      headers: { accept: 'application/json', ...o.headers },
      signal: AbortSignal.any([o.signal, AbortSignal.timeout(o.timeoutMs ?? 15_000)]),
    });
    const raw = await readAtMost(res.body, o.maxBytes ?? 4 * 1024 * 1024, () => new Error(`${o.provider} answered with too much data`));
    const json = jsonOrUndefined(raw);
    return { status: res.statusCode, json };
  } catch (e) {
    return { unreachable: isBlockedAddressError(e) ? `the ${o.provider} address is not allowed` : `${o.provider} could not be reached: ${(e as Error).message}` };
  }
}

/** The targets a check could not get to, each saying why. */
export const notChecked = (targets: readonly string[], outcome: CheckOutcome, why: string): CheckResult[] =>
  targets.map((target) => ({ target, outcome, detail: `not checked: ${why}` }));

/**
 * The read that proves a key, when it did not: the key unreachable, refused (in the provider's
 * words) or unreadable, and every target not checked. Undefined when the read answered 200.
 */
export function keyNotProven(r: FreeRead, targets: readonly string[], o: { provider: string; what: string; words: (r: { status: number; json: unknown }) => string }): CheckResult[] | undefined {
  if ('unreachable' in r) return [{ target: 'key', outcome: 'unreachable', detail: r.unreachable }, ...notChecked(targets, 'unreachable', `${o.provider} could not be reached`)];
  if (r.status === 401 || r.status === 403) return [{ target: 'key', outcome: 'key_refused', detail: o.words(r) }, ...notChecked(targets, 'key_refused', 'the key was refused')];
  if (r.status !== 200) {
    const outcome: CheckOutcome = r.status >= 500 || r.status === 429 ? 'unreachable' : 'failed';
    return [{ target: 'key', outcome, detail: `${o.provider} answered ${r.status} to ${o.what}: ${o.words(r)}` }, ...notChecked(targets, outcome, `${o.what} could not be read`)];
  }
  return undefined;
}

/**
 * A check by one free read that lists names (a provider's models or templates): the read proves
 * the key, and each target must be among the names or it is `model_gone` (in the provider's terms).
 */
export function listingCheck(o: {
  provider: string;
  /** The read, as it is named in the details: `GET /v2/models`. */
  what: string;
  read: (signal: AbortSignal) => Promise<FreeRead>;
  words: (r: { status: number; json: unknown }) => string;
  /** What is listed, singular: `model`, `template`. */
  noun: string;
  /** The names the answer lists, or undefined when it holds no list. */
  names: (json: unknown) => string[] | undefined;
  /** The detail of a target no longer listed. */
  gone: (target: string, names: readonly string[]) => string;
}) {
  return async function check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const r = await o.read(signal);
    const unproven = keyNotProven(r, targets, o);
    if (unproven || 'unreachable' in r) return unproven!;
    const names = o.names(r.json);
    if (!names) return [{ target: 'key', outcome: 'failed', detail: `${o.provider} answered ${o.what} without a list of ${o.noun}s` }, ...notChecked(targets, 'failed', `the ${o.noun} list could not be read`)];
    return [
      { target: 'key', outcome: 'ok', detail: `the key is accepted (${o.what} lists ${names.length} ${o.noun}s)` },
      ...targets.map((target): CheckResult => (names.includes(target) ? { target, outcome: 'ok', detail: `listed by ${o.what}` } : { target, outcome: 'model_gone', detail: o.gone(target, names) })),
    ];
  };
}
