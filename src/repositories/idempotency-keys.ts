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

/**
 * Takes the transaction-scoped advisory lock of a key, waiting at most `waitMs` for a holder to
 * commit; false when it did not come free in time. One round trip: the wait limit is set for this
 * transaction, the lock taken and the limit lifted again, left to right in one select list (the
 * rest of the transaction, a debit waiting on the team row included, has no limit).
 */
export async function lockKey(trx: Transaction<Database>, scope: KeyScope, waitMs: number): Promise<boolean> {
  const lockKey = JSON.stringify([scope.teamId, scope.method, scope.path, scope.key]);
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
 * Runs `work` under a savepoint: when it throws, the transaction is rolled back to where it began
 * and stays usable; the error is rethrown.
 */
export async function underSavepoint<T>(trx: Transaction<Database>, work: () => Promise<T>): Promise<T> {
  await sql`savepoint idempotent_work`.execute(trx);
  let result: T;
  try {
    result = await work();
  } catch (e) {
    // A connection that is gone cannot roll back either: the work's own error is the one to report.
    await sql`rollback to savepoint idempotent_work`.execute(trx).then(
      () => sql`release savepoint idempotent_work`.execute(trx),
      () => undefined,
    );
    throw e;
  }
  await sql`release savepoint idempotent_work`.execute(trx);
  return result;
}

export async function storeOutcome(trx: Db, row: Omit<Insertable<IdempotencyKeysTable>, 'created_at'> & { request_hash: Buffer }): Promise<void> {
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
