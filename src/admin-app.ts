import type { Config } from './config.ts';
import { openDatabase } from './db/connect.ts';
import { migrateIfBehind } from './db/migrate.ts';
import { buildServices, type Services } from './service-factories.ts';

/** The services the admin CLI's team, key, brand, credits and audit commands call. */
const ADMIN_SERVICES = ['teams', 'brands', 'credits', 'members', 'audit'] as const;

/**
 * The admin CLI's entry to the composition root (src/service-factories.ts): the database, and
 * only the services its team, key, brand, credits and audit commands call. No engines, storage,
 * speech, event bus or worker modules are loaded, so a command answers in a few hundred
 * milliseconds (bench/RESULTS.md). A revocation still reaches every server at once: the teams
 * service sends the NOTIFY.
 */
export interface AdminApp extends Pick<Services, (typeof ADMIN_SERVICES)[number]> {
  close: () => Promise<void>;
}

export async function openAdminApp(config: Readonly<Config>, log: (line: string) => void = () => {}): Promise<AdminApp> {
  // Two connections: a command sends a handful of statements, one after another.
  const database = await openDatabase(config, log, 2);
  try {
    await migrateIfBehind(database.pool, log);
    return { ...(await buildServices({ db: database.db, config }, ADMIN_SERVICES)), close: database.close };
  } catch (e) {
    await database.close().catch(() => {});
    throw e;
  }
}
