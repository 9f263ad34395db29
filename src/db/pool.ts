import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseUnavailable } from '../domain/database-unavailable.ts';
import type { Database } from './types.ts';

// numeric (prices) and bigint counts come back as JS numbers: every value we store fits a double.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Db = Kysely<Database>;

/** SQL text -> statement name, for the hot statements whose text never varies between calls. */
const HOT = new Map<string, string>();

/**
 * From now on `compiled.sql` goes as the named statement `name`: each connection parses and plans
 * it once (a generic plan after five runs) instead of on every call. An allow-list, so that
 * statements whose text varies (lists of varying length) do not pile up per connection.
 */
export function prepareHot<T extends { sql: string }>(name: string, compiled: T): T {
  if (!HOT.has(compiled.sql)) HOT.set(compiled.sql, name);
  return compiled;
}

class HotStatementClient extends pg.Client {
  override query(...args: any[]): any {
    const name = typeof args[0] === 'string' && Array.isArray(args[1]) ? HOT.get(args[0]) : undefined;
    if (name && typeof args[2] !== 'function') return super.query({ name, text: args[0], values: args[1] });
    return (super.query as (...a: any[]) => any)(...args);
  }
}

export function createPool(connectionString: string, max = 10): pg.Pool {
  // A request waits at most 8 s for a connection: with the database away it is answered 503, never left hanging.
  const pool = new pg.Pool({ connectionString, max, Client: HotStatementClient, connectionTimeoutMillis: 8000 });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * A pool whose connect() waits (up to `patienceMs`, backing off) while the database is away,
 * instead of failing at once. For graphile-worker: it treats a failed connection while recording a
 * job's end as fatal (its pool stops, or an unawaited promise rejects), where waiting out a restart
 * is what we want. Requests use the ordinary pool, which answers 503 within seconds.
 */
export function createPatientPool(connectionString: string, max: number, patienceMs = 600_000): pg.Pool {
  const pool = createPool(connectionString, max);
  const connectOnce = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const patient = async (): Promise<pg.PoolClient> => {
    const deadline = Date.now() + patienceMs;
    for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
      try {
        return await connectOnce();
      } catch (e) {
        if ((pool as pg.Pool & { ending?: boolean }).ending || !isDatabaseUnavailable(e) || Date.now() + delay > deadline) throw e;
        await sleep(delay);
      }
    }
  };
  // The callback form (pool.query) stays as it is; graphile-worker uses the promise form.
  pool.connect = ((cb?: unknown) => (typeof cb === 'function' ? (connectOnce as (c: unknown) => void)(cb) : patient())) as typeof pool.connect;
  return pool;
}

export function createDb(pool: pg.Pool): Db {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
