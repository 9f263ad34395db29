import { AppError } from '../domain/errors.ts';
import { digestApiKey, isWellFormedApiKey } from '../domain/api-keys.ts';
import type { BucketRule } from '../domain/rate-limit.ts';
import { hasApiAccess } from '../domain/tiers.ts';
import { findActiveKeyByDigest } from '../repositories/api-keys.ts';
import type { Deps } from './deps.ts';
import type { KeyPrincipal } from './principal.ts';
import type { CachedKey, KeyCache } from './key-cache.ts';
import type { KeyUsage } from './key-usage.ts';

// One message for every 401, so a caller cannot tell a revoked key from a mistyped one.
const UNAUTHORIZED = 'Missing or invalid API key';

export function createAuthService({ db, config }: Pick<Deps, 'db' | 'config'>, cache?: KeyCache, usage?: KeyUsage) {
  async function lookup(digest: Buffer): Promise<CachedKey | undefined> {
    const id = cache ? digest.toString('hex') : '';
    const hit = cache?.get(id);
    if (hit) return hit;
    const row = await findActiveKeyByDigest(db, digest);
    if (!row) return undefined;
    const rate = row.rate_per_minute && row.rate_burst ? { perMinute: row.rate_per_minute, burst: row.rate_burst } : null;
    const key = { keyId: row.key_id, teamId: row.team_id, tier: row.tier, rate };
    cache?.set(id, key);
    return key;
  }
  /** Resolves `Authorization: Bearer service_sk_...` to its team and the token bucket its requests draw from (its own, else its tier's), or throws 401/403. */
  async function authorize(authorization: string | undefined): Promise<{ principal: KeyPrincipal; rate: BucketRule }> {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    const key = match?.[1];
    if (!key || !isWellFormedApiKey(key)) throw new AppError('unauthorized', UNAUTHORIZED);
    const row = await lookup(digestApiKey(key));
    if (!row) throw new AppError('unauthorized', UNAUTHORIZED);
    if (!hasApiAccess(row.tier)) {
      throw new AppError('forbidden', 'API access requires a Starter subscription or above');
    }
    usage?.seen(row.keyId);
    return { principal: { teamId: row.teamId, keyId: row.keyId }, rate: row.rate ?? config.rateLimits[row.tier] };
  }
  return {
    authorize,
    /** authorize, for callers that need only the team and key. */
    async authenticate(authorization: string | undefined): Promise<KeyPrincipal> {
      return (await authorize(authorization)).principal;
    },
  };
}
export type AuthService = ReturnType<typeof createAuthService>;
