// Pure: what an error of the database driver means, so every transport answers it the same way.
// SQLSTATE classes and node errors that say the database is away, not that a statement is wrong:
// class 08 (connection exceptions), the server shutting down or starting (57P01-57P03), or full (53300).
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[123]|53300)$/;
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
const UNAVAILABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection timeout|Connection ended unexpectedly/i;

/** True when an error means PostgreSQL cannot be reached right now (answered 503, never 500). */
export function isDatabaseUnavailable(e: unknown): boolean {
  for (let err = e, depth = 0; err && typeof err === 'object' && depth < 5; err = (err as { cause?: unknown }).cause, depth++) {
    const { code, message } = err as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_SQLSTATES.test(code) || UNAVAILABLE_NODE_CODES.has(code))) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
    // AggregateError (a connect to several addresses) carries its reasons in `errors`.
    const inner = (err as { errors?: unknown[] }).errors;
    if (Array.isArray(inner) && inner.some((x) => isDatabaseUnavailable(x))) return true;
  }
  return false;
}
