/**
 * Whether a request that failed without an answer was never sent: the connection was refused or
 * its name did not resolve, so the server saw nothing. Any other failure (a timeout, a reset, an
 * answer cut off) may come after the server acted on the request: a call that starts paid work
 * then has an unknown outcome and is not sent again blindly.
 */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

export function neverSent(e: unknown): boolean {
  return NEVER_SENT.has((e as { code?: string } | null)?.code ?? '');
}
