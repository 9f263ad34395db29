import { AppError } from '../domain/errors.ts';
import { digestApiKey, isWellFormedApiKey } from '../domain/api-keys.ts';
import { hasApiAccess } from '../domain/tiers.ts';
import { findActiveKeyByDigest } from '../repositories/api-keys.ts';
import type { Deps, Principal } from './context.ts';

// One message for every 401, so a caller cannot tell a revoked key from a mistyped one.
const UNAUTHORIZED = 'Missing or invalid API key';

export function createAuthService({ db }: Pick<Deps, 'db'>) {
  return {
    /** Resolves `Authorization: Bearer service_sk_...` to its team, or throws 401/403. */
    async authenticate(authorization: string | undefined): Promise<Principal> {
      const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
      const key = match?.[1];
      if (!key || !isWellFormedApiKey(key)) throw new AppError('unauthorized', UNAUTHORIZED);
      const row = await findActiveKeyByDigest(db, digestApiKey(key));
      if (!row) throw new AppError('unauthorized', UNAUTHORIZED);
      if (!hasApiAccess(row.tier)) {
        throw new AppError('forbidden', 'API access requires a Starter subscription or above');
      }
      return { teamId: row.team_id, keyId: row.key_id };
    },
  };
}
export type AuthService = ReturnType<typeof createAuthService>;
