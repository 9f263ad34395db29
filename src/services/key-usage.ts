import { touchKeysLastUsed } from '../repositories/api-keys.ts';
import type { Deps } from './deps.ts';

/**
 * When each key was last used, for the dashboard's key list. Kept in memory per request and
 * written in one statement per flush (every few seconds, and before a list is read), never by the
 * request itself: the create path stays one round trip.
 */
export function createKeyUsage({ db }: Pick<Deps, 'db'>) {
  let pending = new Map<string, Date>();
  return {
    seen(keyId: string): void {
      pending.set(keyId, new Date());
    },
    async flush(): Promise<void> {
      if (pending.size === 0) return;
      const batch = pending;
      pending = new Map();
      await touchKeysLastUsed(db, [...batch].map(([id, at]) => ({ id, at })));
    },
  };
}
export type KeyUsage = ReturnType<typeof createKeyUsage>;
