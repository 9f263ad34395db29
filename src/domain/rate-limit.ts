/** A sliding-window limit: at most `limit` requests in any `windowSeconds`. */
export interface RateLimitRule {
  scope: string;
  limit: number;
  windowSeconds: number;
}

/** The spec: 3 requests per minute on POST /ad-library/scrape (per team: DESIGN decision 5). */
export const SCRAPE_RATE_LIMIT: RateLimitRule = { scope: 'ad-library-scrape', limit: 3, windowSeconds: 60 };

export type RateLimitDecision =
  | { allowed: true; remaining: number; resetSeconds: number }
  | { allowed: false; retryAfterSeconds: number };

/**
 * `hits`: the times (ms) of the requests already counted, any order; `now` in ms. A slot frees
 * when the oldest hit in the window leaves it: Retry-After is the whole seconds until then,
 * rounded up (at least 1), so a client that waits exactly that long gets in.
 */
export function decide(rule: RateLimitRule, hits: readonly number[], now: number): RateLimitDecision {
  const windowMs = rule.windowSeconds * 1000;
  const inWindow = hits.filter((t) => t > now - windowMs).sort((a, b) => a - b);
  const secondsUntil = (t: number) => Math.max(1, Math.ceil((t + windowMs - now) / 1000));
  if (inWindow.length >= rule.limit) {
    // The request that would pass is the one after the (length - limit + 1)th oldest hit expires.
    return { allowed: false, retryAfterSeconds: secondsUntil(inWindow[inWindow.length - rule.limit]!) };
  }
  const counted = [...inWindow, now];
  return { allowed: true, remaining: rule.limit - counted.length, resetSeconds: secondsUntil(counted[0]!) };
}

/** The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), plus Retry-After on a refusal. */
export function rateLimitHeaders(rule: RateLimitRule, d: RateLimitDecision): Record<string, string> {
  const base = { 'RateLimit-Limit': String(rule.limit), 'RateLimit-Policy': `${rule.limit};w=${rule.windowSeconds}` };
  if (d.allowed) return { ...base, 'RateLimit-Remaining': String(d.remaining), 'RateLimit-Reset': String(d.resetSeconds) };
  return { ...base, 'RateLimit-Remaining': '0', 'RateLimit-Reset': String(d.retryAfterSeconds), 'Retry-After': String(d.retryAfterSeconds) };
}
