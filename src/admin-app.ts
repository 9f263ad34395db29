import type { Config } from './config.ts';
import { openDatabase } from './db/connect.ts';
import { migrateIfBehind } from './db/migrate.ts';
import { createBrandService } from './services/brands.ts';
import { createCreditService } from './services/credits.ts';
import { createTeamService } from './services/teams.ts';
import { createMemberService } from './services/members.ts';
import { createAuditService } from './services/audit.ts';

/**
 * The composition root of the admin CLI's team, key, brand and credits commands: the database and
 * the services they call, nothing else. No engines, storage, speech, event bus or worker
 * modules are loaded, so a command answers in a few hundred milliseconds (bench/RESULTS.md).
 * A revocation still reaches every server at once: the teams service sends the NOTIFY.
 */
export interface AdminApp {
  teams: ReturnType<typeof createTeamService>;
  brands: ReturnType<typeof createBrandService>;
  credits: ReturnType<typeof createCreditService>;
  members: ReturnType<typeof createMemberService>;
  audit: ReturnType<typeof createAuditService>;
  close: () => Promise<void>;
}

export async function openAdminApp(config: Readonly<Config>, log: (line: string) => void = () => {}): Promise<AdminApp> {
  // Two connections: a command sends a handful of statements, one after another.
  const database = await openDatabase(config, log, 2);
  try {
    await migrateIfBehind(database.pool, log);
    const { db } = database;
    return { teams: createTeamService({ db }), brands: createBrandService({ db }), credits: createCreditService({ db }), members: createMemberService({ db, config }), audit: createAuditService({ db, config }), close: database.close };
  } catch (e) {
    await database.close().catch(() => {});
    throw e;
  }
}
