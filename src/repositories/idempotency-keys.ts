import { sql, type Transaction } from 'kysely';
import { prepareHot, type Db } from '../db/pool.ts';
import type { Database, IdempotencyKeysTable } from '../db/types.ts';
import type { Insertable } from 'kysely';

const LOCK_NOT_AVAILABLE = '55P03';

export interface KeyScope {
  teamId: string;
  method: string;
  path: string;
  key: string;
}

/** What a key's advisory lock is named by (hashed into the lock's id). */
export const keyLockName = (k: { team_id: string; method: string; path: string; key: string }) => JSON.stringify([k.team_id, k.method, k.path, k.key]);

/**
 * Takes the transaction-scoped advisory lock of a key, waiting at most `waitMs` for a holder to
 * commit; false when it did not come free in time. One round trip: the wait limit is set for this
 * transaction, the lock taken and the limit lifted again, left to right in one select list (the
 * rest of the transaction, a debit waiting on the team row included, has no limit).
 */
export async function lockKey(trx: Transaction<Database>, scope: KeyScope, waitMs: number): Promise<boolean> {
  const lockKey = keyLockName({ team_id: scope.teamId, ...scope });
  const query = sql`select set_config('lock_timeout', ${String(Math.round(waitMs))}, true) as waiting,
      pg_advisory_xact_lock(hashtextextended(${lockKey}, 0)) as locked,
      set_config('lock_timeout', '0', true) as after`;
  try {
    await trx.executeQuery(prepareHot('adforge_idempotency_lock', query.compile(trx)));
  } catch (e) {
    if ((e as { code?: string }).code === LOCK_NOT_AVAILABLE) return false;
    throw e;
  }
  return true;
}

/**
 * lockKey for many keys at once (a batch of creates in one transaction), in a fixed order so that
 * two batches sharing keys queue rather than deadlock; false when one did not come free in time.
 */
export async function lockKeys(trx: Transaction<Database>, scopes: KeyScope[], waitMs: number): Promise<boolean> {
  const keys = scopes.map((s) => keyLockName({ team_id: s.teamId, ...s }));
  try {
    await sql`select set_config('lock_timeout', ${String(Math.round(waitMs))}, true)`.execute(trx);
    await sql`select count(pg_advisory_xact_lock(h))
      from (select distinct hashtextextended(k, 0) as h from unnest(${keys}::text[]) as k order by 1) as ordered`.execute(trx);
  } catch (e) {
    if ((e as { code?: string }).code === LOCK_NOT_AVAILABLE) return false;
    throw e;
  }
  await sql`select set_config('lock_timeout', '0', true)`.execute(trx);
  return true;
}

export type StoredKey = Omit<Insertable<IdempotencyKeysTable>, 'created_at'> & { request_hash: Buffer };

export async function storeOutcome(trx: Db, row: StoredKey): Promise<void> {
  const query = trx
    .insertInto('idempotency_keys')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['team_id', 'method', 'path', 'key']).doUpdateSet({
        request_hash: row.request_hash,
        response_status: row.response_status,
        response_body: row.response_body ?? null,
        created_at: sql`now()`,
      }),
    );
  await trx.executeQuery(prepareHot('adforge_idempotency_store', query.compile()));
}

/** storeOutcome for many keys in one statement. */
export async function storeOutcomes(trx: Db, rows: StoredKey[]): Promise<void> {
  if (!rows.length) return;
  await trx
    .insertInto('idempotency_keys')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['team_id', 'method', 'path', 'key']).doUpdateSet({
        request_hash: sql`excluded.request_hash`,
        response_status: sql`excluded.response_status`,
        response_body: sql`excluded.response_body`,
        created_at: sql`now()`,
      }),
    )
    .execute();
}

/** findStoredOutcome for many keys of one team in one read. */
export async function findStoredOutcomes(db: Db, teamId: string, scopes: Omit<KeyScope, 'teamId'>[]) {
  if (!scopes.length) return [];
  return db
    .selectFrom('idempotency_keys')
    .select(['method', 'path', 'key', 'request_hash', 'response_status', 'response_body', 'created_at'])
    .where('team_id', '=', teamId)
    .where(
      sql<boolean>`(method, path, key) in (select * from unnest(${scopes.map((s) => s.method)}::text[], ${scopes.map((s) => s.path)}::text[], ${scopes.map((s) => s.key)}::text[]))`,
    )
    .execute();
}

export async function findStoredOutcome(db: Db, scope: KeyScope) {
  const query = db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'response_status', 'response_body', 'created_at'])
    .where('team_id', '=', scope.teamId)
    .where('method', '=', scope.method)
    .where('path', '=', scope.path)
    .where('key', '=', scope.key);
  const { rows } = await db.executeQuery(prepareHot('adforge_idempotency_find', query.compile()));
  return rows[0];
}

export async function purgeKeysOlderThan(db: Db, hours: number): Promise<number> {
  const res = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', sql<Date>`now() - make_interval(hours => ${hours})`)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
