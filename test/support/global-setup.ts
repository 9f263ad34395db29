import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedHandle } from '../../src/db/embedded.ts';
import { migrate } from '../../src/db/migrate.ts';
import { chromiumPath } from './browser.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

/**
 * The dashboard and GraphiQL the server serves, built as `npm start` builds them: on a clean
 * clone always, locally only when a source (web/ or the domain it shares) changed since.
 */
async function buildWebIfStale(): Promise<void> {
  const root = path.resolve(import.meta.dirname, '../..');
  const built = await fs.stat(path.join(root, 'web/dist/index.html')).then((s) => s.mtimeMs, () => 0);
  const newest = async (dir: string): Promise<number> => {
    let latest = 0;
    for (const e of await fs.readdir(dir, { withFileTypes: true })) {
      if (e.name === 'dist' || e.name === 'node_modules') continue;
      const p = path.join(dir, e.name);
      latest = Math.max(latest, e.isDirectory() ? await newest(p) : (await fs.stat(p)).mtimeMs);
    }
    return latest;
  };
  const sources = Math.max(await newest(path.join(root, 'web')), await newest(path.join(root, 'src/domain')), (await fs.stat(path.join(root, 'package-lock.json'))).mtimeMs);
  if (built > sources) return;
  const { build } = await import('vite');
  await build({ configFile: path.join(root, 'web/vite.config.ts'), logLevel: 'warn' });
}

/** One PostgreSQL for the whole run (embedded, or TEST_DATABASE_URL) and one migrated template database. */
export default async function setup(project: TestProject) {
  await buildWebIfStale();
  // The packaged Chromium is unpacked once here: two browser test files unpacking it at the same
  // time raced (one spawned the binary while the other was still writing it: ETXTBSY).
  process.env.CHROMIUM_PATH ??= await chromiumPath();
  let embedded: EmbeddedHandle | undefined;
  let dir: string | undefined;
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-test-pg-'));
    // mkdtemp makes it 0700; as root, the cluster runs as the postgres user, who must be able to enter it.
    await fs.chmod(dir, 0o755);
    embedded = await startEmbeddedPostgres({ dir: path.join(dir, 'pg') });
    adminUrl = embedded.url('postgres');
  }
  const template = `adforge_template_${process.pid}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  await admin.end();

  const pool = new pg.Pool({ connectionString: withDatabase(adminUrl, template), max: 2 });
  pool.on('error', () => {});
  pool.on('connect', (c) => c.on('error', () => {}));
  await migrate(pool);
  await pool.end();

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);

  return async () => {
    if (embedded) {
      await embedded.stop();
      if (dir) await fs.rm(dir, { recursive: true, force: true });
    } else {
      const c = new pg.Client(adminUrl);
      await c.connect();
      const dbs = await c.query<{ datname: string }>(
        `select datname from pg_database where datname like 'adforge_t\\_%' or datname = $1`,
        [template],
      );
      for (const { datname } of dbs.rows) await c.query(`drop database if exists ${c.escapeIdentifier(datname)} with (force)`);
      await c.end();
    }
  };
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
