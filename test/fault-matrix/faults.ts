import type { Fault } from '../support/fault-proxy.ts';

/** An answer in the provider's own words: status, body and headers. */
export interface ProviderAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The Retry-After a fault names, in seconds. */
export const RETRY_AFTER_SECONDS = 2;

/**
 * The faults of the matrix, in the order of its rows. `status` faults are answered before the
 * provider sees the request (a front server's refusal, a rate limit); the others let the provider
 * accept it first (see test/support/fault-proxy.ts), since those are the ones that can make it
 * bill a job adforge never hears of.
 */
export const FAULTS = [
  { id: 'hang', label: 'no answer until the client gives up' },
  { id: 'reset', label: 'connection reset after the provider accepted' },
  { id: 'redirect', label: 'redirect (307)' },
  { id: 'malformed', label: 'malformed body' },
  { id: 'oversized', label: 'oversized body' },
  { id: '408', label: '408' },
  { id: '409', label: '409' },
  { id: '425', label: '425' },
  { id: '429-retry-after', label: '429 with Retry-After' },
  { id: '429', label: '429 without Retry-After' },
  { id: '500', label: '500' },
  { id: '502', label: '502' },
  { id: '503', label: '503' },
  { id: '504', label: '504' },
  { id: 'in-progress', label: "the provider's \"still in progress\" for a repeated key" },
  { id: 'kill', label: 'worker killed between sending and recording the answer' },
] as const;
export type FaultId = (typeof FAULTS)[number]['id'];

/**
 * The fault to inject for one cell, in the provider's terms: `errorAnswer` gives its error body
 * for a status (with the Retry-After it would name), `inProgress` its answer to a repeated
 * idempotency key while the first request runs. Undefined: the cell does not apply (n/a).
 */
export function faultOf(id: FaultId, p: { errorAnswer: (status: number, retryAfterSeconds?: number) => ProviderAnswer; inProgress?: ProviderAnswer | undefined }): Fault | undefined {
  switch (id) {
    case 'hang':
    case 'reset':
    case 'redirect':
    case 'malformed':
    case 'oversized':
    case 'kill':
      return { kind: id };
    case 'in-progress':
      return p.inProgress ? { kind: 'in_progress', ...p.inProgress } : undefined;
    case '429-retry-after': {
      const a = p.errorAnswer(429, RETRY_AFTER_SECONDS);
      return { kind: 'status', ...a, headers: { ...a.headers, 'retry-after': String(RETRY_AFTER_SECONDS) } };
    }
    default:
      return { kind: 'status', ...p.errorAnswer(Number(id)) };
  }
}
