import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from './pool.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));
// Any constant works; it only has to be the same in every adforge process.
const LOCK_ID = 0x6164666f;

/** Applies our forward-only SQL migrations, then graphile-worker's own schema. Safe to run from many processes at once. */
export async function migrate(pool: pg.Pool, log: (line: string) => void = () => {}): Promise<string[]> {
  const files = (await fs.readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('select pg_advisory_lock($1)', [LOCK_ID]);
    await client.query(
      'create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())',
    );
    const done = new Set(
      (await client.query<{ name: string }>('select name from schema_migrations')).rows.map((r) => r.name),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await fs.readFile(path.join(MIGRATIONS_DIR, file), 'utf8');
      await client.query('begin');
      try {
        await client.query(sql);
        await client.query('insert into schema_migrations (name) values ($1)', [file]);
        await client.query('commit');
      } catch (e) {
        await client.query('rollback');
        throw new Error(`migration ${file} failed: ${(e as Error).message}`);
      }
      applied.push(file);
      log(`applied migration ${file}`);
    }
  } finally {
    await client.query('select pg_advisory_unlock($1)', [LOCK_ID]).catch(() => {});
    client.release();
  }
  // Imported here: the admin CLI opens the database without loading graphile-worker.
  const worker = await import('graphile-worker');
  await worker.runMigrations({ pgPool: pool, logger: new worker.Logger(() => () => {}) });
  return applied;
}

/** Migration files not applied to this database yet (all of them on a fresh one). */
let migrationFiles: Promise<string[]> | undefined;

export async function pendingMigrations(pool: pg.Pool): Promise<string[]> {
  // The files ship with the code: read once per process (/readyz asks at every probe).
  const files = await (migrationFiles ??= fs.readdir(MIGRATIONS_DIR).then((all) => all.filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort()));
  const applied = await pool
    .query<{ name: string }>('select name from schema_migrations')
    .then((r) => new Set(r.rows.map((row) => row.name)))
    .catch((e: { code?: string }) => {
      if (e.code === '42P01') return new Set<string>(); // a fresh database: no schema_migrations yet
      throw e;
    });
  return files.filter((f) => !applied.has(f));
}

/**
 * For commands that use only our tables (the admin CLI): migrates, as `migrate` does, only when
 * some migration file is not applied yet; otherwise one cheap read and nothing else loaded.
 */
export async function migrateIfBehind(pool: pg.Pool, log: (line: string) => void = () => {}): Promise<void> {
  if ((await pendingMigrations(pool)).length) await migrate(pool, log);
}

/** Throws unless the database answers and our schema is there: what /healthz asks. */
export async function checkSchemaAnswers(db: Db): Promise<void> {
  await sql`select count(*) from schema_migrations`.execute(db);
}
