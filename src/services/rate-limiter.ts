import { AppError } from '../domain/errors.ts';
import { bucketHeaders, takeTokens, type BucketDecision, type BucketRule, type BucketState } from '../domain/rate-limit.ts';

/**
 * Each API key's token bucket, held by this node (DESIGN decision 5). With N API nodes behind a
 * balancer a key can draw up to N times its limit: the documented bound. The least recently used
 * buckets beyond `maxKeys` are forgotten (a forgotten bucket starts full, as an idle one would be).
 */
export function createRateLimiter({ maxKeys = 100_000 }: { maxKeys?: number } = {}) {
  const buckets = new Map<string, BucketState>();
  function take(keyId: string, rule: BucketRule, cost: number, now = Date.now()): BucketDecision {
    const d = takeTokens(rule, buckets.get(keyId), cost, now);
    // Re-inserted, so the Map's order is least recently used first.
    buckets.delete(keyId);
    buckets.set(keyId, d.state);
    if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
    return d;
  }
  return {
    /**
     * A request's draw, as REST and GraphQL answer it: the RateLimit-* headers for every answer,
     * and the 429 to answer instead when the bucket did not hold its cost.
     */
    draw(keyId: string, rule: BucketRule, cost: number): { headers: Record<string, string>; refusal?: AppError } {
      const decision = take(keyId, rule, cost);
      const headers = bucketHeaders(rule, decision);
      if (decision.allowed) return { headers };
      return { headers, refusal: new AppError('rate_limited', `Too many requests with this API key: retry in ${decision.retryAfterSeconds} s`, headers) };
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;
