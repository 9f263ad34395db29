import { TIERS, type Tier } from './tiers.ts';
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

/** A token bucket: `burst` tokens at most, refilled at `perMinute` tokens a minute. */
export interface BucketRule {
  perMinute: number;
  burst: number;
}

export interface BucketState {
  tokens: number;
  /** When `tokens` was last brought up to date (ms). */
  at: number;
}

/** Our defaults per tier (DESIGN decision 5; the spec names none), overridable per tier and per key. */
export const TIER_RATE_LIMITS: Record<Tier, BucketRule> = {
  free: { perMinute: 60, burst: 20 },
  starter: { perMinute: 300, burst: 100 },
  pro: { perMinute: 1200, burst: 300 },
  business: { perMinute: 6000, burst: 1000 },
};

/** What a request takes from its key's bucket: a read 1, anything that makes or changes something 5. */
export const REQUEST_COST = { read: 1, write: 5 } as const;

export type BucketDecision =
  | { allowed: true; state: BucketState; remaining: number; resetSeconds: number }
  | { allowed: false; state: BucketState; retryAfterSeconds: number; resetSeconds: number };

/**
 * Takes `cost` tokens if the bucket holds them. Refused requests take nothing. Retry-After is the
 * whole seconds until enough tokens have come back (at least 1); Reset the seconds until the
 * bucket is full again.
 */
export function takeTokens(rule: BucketRule, state: BucketState | undefined, cost: number, now: number): BucketDecision {
  const perMs = rule.perMinute / 60_000;
  const tokens = Math.min(rule.burst, (state?.tokens ?? rule.burst) + Math.max(0, now - (state?.at ?? now)) * perMs);
  return tokens >= cost ? bucketDecision(rule, tokens - cost, true, cost, now) : bucketDecision(rule, tokens, false, cost, now);
}

/**
 * The decision for a bucket left holding `tokens` after a draw of `cost` that was allowed or not:
 * takeTokens' answer, for a store that drew the tokens itself (the shared bucket in PostgreSQL).
 */
export function bucketDecision(rule: BucketRule, tokens: number, allowed: boolean, cost: number, now: number): BucketDecision {
  const perMs = rule.perMinute / 60_000;
  const resetSeconds = Math.ceil((rule.burst - tokens) / perMs / 1000);
  if (allowed) return { allowed: true, state: { tokens, at: now }, remaining: Math.floor(tokens), resetSeconds };
  const wait = Math.max(1, Math.ceil((cost - tokens) / perMs / 1000));
  return { allowed: false, state: { tokens, at: now }, retryAfterSeconds: wait, resetSeconds };
}

/** The IETF RateLimit fields for a bucket (limit = burst, policy with its refill window), plus Retry-After on a refusal. */
export function bucketHeaders(rule: BucketRule, d: BucketDecision): Record<string, string> {
  const base = { 'RateLimit-Limit': String(rule.burst), 'RateLimit-Policy': `${rule.burst};w=${Math.max(1, Math.round((rule.burst / rule.perMinute) * 60))}` };
  if (d.allowed) return { ...base, 'RateLimit-Remaining': String(d.remaining), 'RateLimit-Reset': String(d.resetSeconds) };
  return { ...base, 'RateLimit-Remaining': '0', 'RateLimit-Reset': String(d.resetSeconds), 'Retry-After': String(d.retryAfterSeconds) };
}

/** `RATE_LIMIT_TIERS`: `tier=perMinute:burst` pairs, comma-separated, over the defaults. */
export function parseTierRateLimits(text: string | undefined): Record<Tier, BucketRule> {
  const out = { ...TIER_RATE_LIMITS };
  if (!text?.trim()) return out;
  for (const part of text.split(',')) {
    const m = /^\s*(\w+)\s*=\s*(\d{1,7})\s*:\s*(\d{1,7})\s*$/.exec(part);
    if (!m || !(TIERS as readonly string[]).includes(m[1]!)) throw new Error(`RATE_LIMIT_TIERS: "${part.trim()}" is not tier=perMinute:burst with a tier of ${TIERS.join(', ')}`);
    const rule = { perMinute: Number(m[2]), burst: Number(m[3]) };
    if (rule.perMinute < 1 || rule.burst < 1) throw new Error(`RATE_LIMIT_TIERS: "${part.trim()}": both numbers must be at least 1`);
    out[m[1] as Tier] = rule;
  }
  return out;
}
