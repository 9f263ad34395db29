import { takeTokens, type BucketDecision, type BucketRule, type BucketState } from '../domain/rate-limit.ts';

/**
 * Each API key's token bucket, held by this node (DESIGN decision 5). With N API nodes behind a
 * balancer a key can draw up to N times its limit: the documented bound. The least recently used
 * buckets beyond `maxKeys` are forgotten (a forgotten bucket starts full, as an idle one would be).
 */
export function createRateLimiter({ maxKeys = 100_000 }: { maxKeys?: number } = {}) {
  const buckets = new Map<string, BucketState>();
  return {
    take(keyId: string, rule: BucketRule, cost: number, now = Date.now()): BucketDecision {
      const d = takeTokens(rule, buckets.get(keyId), cost, now);
      // Re-inserted, so the Map's order is least recently used first.
      buckets.delete(keyId);
      buckets.set(keyId, d.state);
      if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
      return d;
    },
    /** Forgets a key's bucket (its limit changed: it starts full under the new one). */
    forget(keyId: string): void {
      buckets.delete(keyId);
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;
