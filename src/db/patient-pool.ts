import pg from 'pg';
import { createPool, HotStatementClient } from './pool.ts';
import { waitOutOutage } from './wait-out-outage.ts';

// Statements that belong to their connection's session or transaction: run again on another
// connection they would mean something else (a LISTEN nobody reads, half a transaction).
const SESSION_BOUND = /^\s*(begin|start|commit|end|rollback|abort|savepoint|release|prepare|deallocate|declare|fetch|move|close|listen|unlisten|set|reset|discard)\b|pg_advisory_(un)?lock/i;
const TRANSACTION_START = /^\s*(begin|start\s+transaction)\b/i;
const TRANSACTION_END = /^\s*(commit|end|rollback|abort)\b/i;

/**
 * graphile-worker's pool: it waits out a database outage, however long, instead of failing.
 * graphile-worker (0.17, 0.18) treats a failed statement while fetching, completing, failing or
 * returning jobs as fatal: its batches do not retry, its pool shuts itself down, and a local queue
 * that then cannot return its jobs throws where nothing catches it, which ends the process. Here:
 * - connect() backs off (250 ms doubling to 5 s) while the database is unreachable;
 * - a statement outside a transaction whose connection was lost (the postmaster restarted, an
 *   idle connection cut) runs again on a new connection, after the same backoff. graphile-worker's
 *   statements on jobs are idempotent (complete, fail and return match the locking worker's id),
 *   and a fetch whose answer was lost after it committed leaves its jobs locked whether or not it
 *   is run again.
 * Both stop when the pool is ended (the worker shutting down). Requests use the ordinary pool,
 * which answers 503 within seconds.
 */
export function createPatientPool(connectionString: string, max: number): pg.Pool {
  let pool: pg.Pool | undefined;
  const ending = () => (pool as (pg.Pool & { ending?: boolean }) | undefined)?.ending === true;

  const onNewConnection = async (args: unknown[]): Promise<unknown> => {
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: 8000 });
    client.on('error', () => {});
    try {
      await client.connect();
      return await (client.query as (...a: unknown[]) => Promise<unknown>)(...args);
    } finally {
      void client.end().catch(() => {});
    }
  };

  class PatientClient extends HotStatementClient {
    #inTransaction = false;

    override query(...args: any[]): any {
      const text: unknown = typeof args[0] === 'string' ? args[0] : args[0]?.text;
      // Callback and streaming forms are left as they are: graphile-worker uses promises.
      const promiseForm = typeof text === 'string' && typeof args[0]?.submit !== 'function' && !args.some((a) => typeof a === 'function');
      if (!promiseForm) return super.query(...args);
      const again = !this.#inTransaction && !SESSION_BOUND.test(text);
      if (TRANSACTION_START.test(text)) this.#inTransaction = true;
      else if (TRANSACTION_END.test(text)) this.#inTransaction = false;
      const first = super.query(...args) as Promise<unknown>;
      if (!again) return first;
      return first.catch((firstError: unknown) => waitOutOutage(() => onNewConnection(args), { firstError, stop: ending }));
    }
  }

  pool = createPool(connectionString, max, PatientClient);
  const connectOnce = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  // The callback form (pool.query) stays as it is; graphile-worker uses the promise form.
  pool.connect = ((cb?: unknown) => (typeof cb === 'function' ? (connectOnce as (c: unknown) => void)(cb) : waitOutOutage(connectOnce, { stop: ending }))) as typeof pool.connect;
  return pool;
}
