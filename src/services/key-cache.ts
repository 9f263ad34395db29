import type { BucketRule } from '../domain/rate-limit.ts';
import type { Team } from '../db/types.ts';

export interface CachedKey {
  keyId: string;
  teamId: string;
  tier: Team['tier'];
  /** The key's own token bucket, when it has one. */
  rate: BucketRule | null;
}

/**
 * The key lookup of every request, answered from memory for at most `ttlMs` (1 s): a revocation
 * clears it at once on this node and, through Postgres NOTIFY, on every other; a notice that never
 * arrives is bounded by the entry's life, so a revoked key is never accepted for more than a second.
 * Only found keys are kept (an unknown key always asks the database), at most `max` of them.
 */
export function createKeyCache(opts: { ttlMs?: number; max?: number } = {}) {
  const ttlMs = opts.ttlMs ?? 1000;
  const max = opts.max ?? 10_000;
  const byDigest = new Map<string, { key: CachedKey; expires: number }>();
  return {
    get(digest: string): CachedKey | undefined {
      const hit = byDigest.get(digest);
      if (!hit) return undefined;
      if (hit.expires <= performance.now()) {
        byDigest.delete(digest);
        return undefined;
      }
      return hit.key;
    },
    set(digest: string, key: CachedKey): void {
      // The oldest entry (Map keeps insertion order) makes room.
      if (byDigest.size >= max) byDigest.delete(byDigest.keys().next().value!);
      byDigest.set(digest, { key, expires: performance.now() + ttlMs });
    },
    forgetKey(keyId: string): void {
      for (const [digest, hit] of byDigest) if (hit.key.keyId === keyId) byDigest.delete(digest);
    },
    clear: (): void => byDigest.clear(),
  };
}
export type KeyCache = ReturnType<typeof createKeyCache>;
