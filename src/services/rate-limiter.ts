import type { Db } from '../db/pool.ts';
import { AppError } from '../domain/errors.ts';
import { bucketDecision, bucketHeaders, takeTokens, type BucketDecision, type BucketRule, type BucketState } from '../domain/rate-limit.ts';
import { drawFromBucket } from '../repositories/rate-buckets.ts';

/**
 * Each API key's token bucket (DESIGN decision 5). `postgres` (the default): one bucket per key in
 * the database, drawn in one statement, so the limit holds across every API node. `memory`: the
 * bucket is held by this node, no round trip; with N API nodes a key can draw up to N times its
 * limit. In memory the least recently used buckets beyond `maxKeys` are forgotten (a forgotten
 * bucket starts full, as an idle one would be).
 */
export function createRateLimiter(opts: { store: 'memory'; maxKeys?: number } | { store: 'postgres'; db: Db }) {
  const buckets = new Map<string, BucketState>();
  const maxKeys = opts.store === 'memory' ? (opts.maxKeys ?? 100_000) : 0;
  function takeHere(keyId: string, rule: BucketRule, cost: number, now = Date.now()): BucketDecision {
    const d = takeTokens(rule, buckets.get(keyId), cost, now);
    // Re-inserted, so the Map's order is least recently used first.
    buckets.delete(keyId);
    buckets.set(keyId, d.state);
    if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
    return d;
  }
  async function take(keyId: string, rule: BucketRule, cost: number): Promise<BucketDecision> {
    if (opts.store === 'memory') return takeHere(keyId, rule, cost);
    const drawn = await drawFromBucket(opts.db, keyId, rule, cost);
    return bucketDecision(rule, drawn.tokens, drawn.allowed, cost, drawn.at);
  }
  return {
    /**
     * A request's draw, as REST and GraphQL answer it: the RateLimit-* headers for every answer,
     * and the 429 to answer instead when the bucket did not hold its cost.
     */
    async draw(keyId: string, rule: BucketRule, cost: number): Promise<{ headers: Record<string, string>; refusal?: AppError }> {
      const decision = await take(keyId, rule, cost);
      const headers = bucketHeaders(rule, decision);
      if (decision.allowed) return { headers };
      if (cost > rule.burst) {
        // Never payable (a large GraphQL batch): waiting does not help, splitting it does.
        // Retry-After says when the bucket is full again.
        const full = String(Math.max(1, decision.resetSeconds));
        const fullHeaders = { ...headers, 'Retry-After': full };
        return { headers: fullHeaders, refusal: new AppError('rate_limited', `Too many requests with this API key: this request costs ${cost} tokens, more than this API key's bucket holds (${rule.burst}); send its work in smaller requests`, fullHeaders) };
      }
      return { headers, refusal: new AppError('rate_limited', `Too many requests with this API key: retry in ${decision.retryAfterSeconds} s`, headers) };
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;
