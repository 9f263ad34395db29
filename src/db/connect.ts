import path from 'node:path';
import pg from 'pg';
import type { Config } from '../config.ts';
import { checkSchemaAnswers } from './migrate.ts';
import { createPatientPool } from './patient-pool.ts';
import { createDb, createPool, type Db } from './pool.ts';

export const EMBEDDED_DATABASE = 'adforge';

export interface Database {
  url: string;
  pool: pg.Pool;
  db: Db;
  embedded: boolean;
  /** Throws unless the database answers and our schema is there (what /healthz asks). */
  check: () => Promise<void>;
  /** Another pool on the same database that waits out an outage (graphile-worker's: see createPatientPool). */
  openPatientPool: (max: number) => pg.Pool;
  close: () => Promise<void>;
}

/** DATABASE_URL when set; otherwise the embedded cluster under DATA_DIR/pg, started or attached to. */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'pgPort'>,
  log: (line: string) => void,
  poolSize = 10,
  alert: (line: string) => void = log,
): Promise<Database> {
  let url = config.databaseUrl;
  let stopEmbedded = async () => {};
  let adminUrl: string | undefined;
  if (!url) {
    // Imported only without DATABASE_URL: the process control of the embedded cluster.
    const { startEmbeddedPostgres } = await import('./embedded.ts');
    const pgHandle = await startEmbeddedPostgres({ dir: path.join(config.dataDir, 'pg'), port: config.pgPort, log, alert });
    stopEmbedded = pgHandle.stop;
    adminUrl = pgHandle.url('postgres');
    url = pgHandle.url(EMBEDDED_DATABASE);
  }
  const pool = createPool(url, poolSize);
  const db = createDb(pool);
  if (adminUrl) await connectCreating(pool, adminUrl);
  return {
    url,
    pool,
    db,
    embedded: !config.databaseUrl,
    check: () => checkSchemaAnswers(db),
    openPatientPool: (max) => createPatientPool(url, max),
    close: async () => {
      await db.destroy();
      // Kysely ends the pool only if it ran a query itself; `adforge migrate` uses the pool directly.
      if (!pool.ended) await pool.end();
      await stopEmbedded();
    },
  };
}

/**
 * The embedded cluster's database exists after the first start: the pool's first connection finds
 * out, and stays in the pool for the first statement. Only a cluster without it (a new one) pays
 * a connection to the `postgres` database to create it (an admin command thus opens one connection).
 */
async function connectCreating(pool: pg.Pool, adminUrl: string): Promise<void> {
  const client = await pool.connect().catch(async (e: { code?: string }) => {
    if (e.code !== '3D000') throw e; // invalid_catalog_name: no such database
    await ensureDatabase(adminUrl, EMBEDDED_DATABASE);
    return pool.connect();
  });
  client.release();
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client(adminUrl);
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`create database ${client.escapeIdentifier(name)}`).catch((e: { code?: string }) => {
        if (e.code !== '42P04') throw e; // another process created it first
      });
    }
  } finally {
    await client.end();
  }
}
