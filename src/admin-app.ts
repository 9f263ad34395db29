import type { Config } from './config.ts';
import { openDatabase } from './db/connect.ts';
import { migrateIfBehind } from './db/migrate.ts';
import { buildServices, type Services } from './service-factories.ts';

/** The services the admin CLI's team, key, user, brand, credits and audit commands call. */
export type AdminService = 'teams' | 'brands' | 'credits' | 'members' | 'audit';

/**
 * The admin CLI's entry to the composition root (src/service-factories.ts): the database, and
 * only the services the command names. No engines, storage, speech, event bus or worker modules
 * are loaded, nor another command's services (`team create` does not load the brands service's
 * upload checks), so a command answers in a few hundred milliseconds (bench/RESULTS.md). A
 * revocation still reaches every server at once: the teams service sends the NOTIFY.
 */
export type AdminApp<K extends AdminService> = Pick<Services, K> & { close: () => Promise<void> };

export async function openAdminApp<K extends AdminService>(config: Readonly<Config>, services: readonly K[], log: (line: string) => void = () => {}): Promise<AdminApp<K>> {
  // Two connections: a command sends a handful of statements, one after another.
  const database = await openDatabase(config, log, 2);
  try {
    await migrateIfBehind(database.pool, log);
    return { ...(await buildServices({ db: database.db, config }, services)), close: database.close };
  } catch (e) {
    await database.close().catch(() => {});
    throw e;
  }
}
