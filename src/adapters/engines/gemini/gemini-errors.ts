/*
 * Google's error body, {error: {code, message, status, details}} (google.rpc.Status as JSON). A key
 * Google does not know is refused with 400 INVALID_ARGUMENT and an ErrorInfo whose reason is
 * API_KEY_INVALID (not 401/403), so the status alone cannot tell a bad key from a bad request.
 */
interface GoogleError {
  code?: unknown;
  message?: unknown;
  status?: unknown;
  details?: Array<{ '@type'?: unknown; reason?: unknown; retryDelay?: unknown }>;
}

const errorOf = (json: unknown): GoogleError | undefined => (json as { error?: GoogleError } | undefined)?.error;

/** The key itself was refused: 401/403, or a 400 whose ErrorInfo says API_KEY_INVALID. */
export function isKeyRefused(status: number, json: unknown): boolean {
  if (status === 401 || status === 403) return true;
  return status === 400 && (errorOf(json)?.details ?? []).some((d) => d?.reason === 'API_KEY_INVALID');
}

/** Google's own words: its message, and its status name when there is one. */
export function googleWords(status: number, json: unknown): string {
  const e = errorOf(json);
  const message = typeof e?.message === 'string' ? e.message.slice(0, 500) : `it answered ${status}`;
  return typeof e?.status === 'string' ? `${e.status}: ${message}` : message;
}

/**
 * The wait a 429 RESOURCE_EXHAUSTED names in its google.rpc.RetryInfo detail (`retryDelay`, a
 * protobuf Duration as JSON: "22s", "1.5s"), in ms; Google sends no Retry-After header.
 */
export function googleRetryDelayMs(json: unknown): number | undefined {
  const info = (errorOf(json)?.details ?? []).find((d) => typeof d?.['@type'] === 'string' && d['@type'].endsWith('google.rpc.RetryInfo'));
  const m = typeof info?.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(info.retryDelay) : null;
  const ms = m ? Math.ceil(Number(m[1]) * 1000) : undefined;
  return ms !== undefined && ms <= 86_400_000 ? ms : undefined;
}
