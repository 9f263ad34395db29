import { retryAfterMs } from '../net/retry-after.ts';
import { UpstreamError } from './upstream.ts';

// Errors from before a byte was sent: a job cannot exist upstream.
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * A provider's HTTP error answer as an UpstreamError, the same way for every adapter: 401/403 the
 * key, 429 a wait (Retry-After), a 5xx to a submit an unknown outcome (unless the provider says
 * that status queued nothing), other 5xx a retry, the rest the provider's refusal with its message.
 */
export function httpFailure(o: {
  provider: string;
  status: number;
  retryAfter: string | string[] | undefined;
  message: string | undefined;
  submit: boolean;
  /** Statuses that provably created nothing, even to a submit (the provider's own client resends on them). */
  safeToResend?: ReadonlySet<number>;
}): UpstreamError {
  const { provider, status } = o;
  if (status === 401 || status === 403) return new UpstreamError('auth', `${provider} refused the service credentials`);
  if (status === 429) return new UpstreamError('rate_limited', `${provider} is rate limiting`, { retryAfterMs: retryAfterMs(o.retryAfter) ?? undefined });
  if (o.safeToResend?.has(status)) return new UpstreamError('transient', `${provider} answered ${status}`);
  if (status >= 500) return new UpstreamError(o.submit ? 'unsent_unknown' : 'transient', `${provider} answered ${status}${o.submit ? ' to the submit' : ''}`);
  return new UpstreamError('refused', `${provider} refused the request: ${o.message ?? `it answered ${status}`}`);
}

/** A request that got no answer: before anything was sent it is simply retried; after, a submit's outcome is unknown. */
export function networkFailure(provider: string, e: unknown, submit: boolean): UpstreamError {
  const code = (e as { code?: string }).code ?? '';
  return new UpstreamError(submit && !NOT_SENT.has(code) ? 'unsent_unknown' : 'transient', `${provider} could not be reached`, { cause: e });
}
