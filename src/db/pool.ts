import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './types.ts';

// numeric (prices) and bigint counts come back as JS numbers: every value we store fits a double.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Db = Kysely<Database>;

/**
 * The hot statements by their SQL text's length, then text: kysely compiles a new string on every
 * call, and a Map keyed by that string would hash all of its few kilobytes on every query (twice per
 * hot one). A length is known at once, so most statements are passed over without reading their
 * text, and a hot one is compared, not hashed.
 */
const HOT = new Map<number, Array<{ sql: string; name: string }>>();

function hotName(text: string): string | undefined {
  const same = HOT.get(text.length);
  if (same) for (const h of same) if (h.sql === text) return h.name;
  return undefined;
}

/**
 * From now on `compiled.sql` goes as the named statement `name`: each connection parses and plans
 * it once (a generic plan after five runs) instead of on every call. An allow-list, so that
 * statements whose text varies (lists of varying length) do not pile up per connection.
 */
export function prepareHot<T extends { sql: string }>(name: string, compiled: T): T {
  if (hotName(compiled.sql) === undefined) {
    const same = HOT.get(compiled.sql.length);
    if (same) same.push({ sql: compiled.sql, name });
    else HOT.set(compiled.sql.length, [{ sql: compiled.sql, name }]);
  }
  return compiled;
}

export class HotStatementClient extends pg.Client {
  override query(...args: any[]): any {
    const name = typeof args[0] === 'string' && Array.isArray(args[1]) ? hotName(args[0]) : undefined;
    if (name && typeof args[2] !== 'function') return super.query({ name, text: args[0], values: args[1] });
    return (super.query as (...a: any[]) => any)(...args);
  }
}

export function createPool(connectionString: string, max = 10, Client: typeof pg.Client = HotStatementClient): pg.Pool {
  // A request waits at most 8 s for a connection: with the database away it is answered 503, never left hanging.
  const pool = new pg.Pool({ connectionString, max, Client, connectionTimeoutMillis: 8000 });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

export function createDb(pool: pg.Pool): Db {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
