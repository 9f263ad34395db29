/**
 * How long a call that uploads a body may take: the provider's own limit for the call, plus the
 * time the body takes to send at the slowest rate adforge waits for. Providers document their
 * size limits (Submagic: 2 GB a video) but not a time, and the call is cut when it runs out: a
 * submit cut after sending has an unknown outcome, so the limit must cover a slow link.
 */
export const SLOWEST_UPLOAD_BYTES_PER_SECOND = 1_000_000;

export function uploadTimeoutMs(bytes: number, callMs: number): number {
  return callMs + Math.ceil(Math.max(0, bytes) / SLOWEST_UPLOAD_BYTES_PER_SECOND) * 1000;
}
