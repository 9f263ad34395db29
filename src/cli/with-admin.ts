import type { AdminApp } from '../admin-app.ts';
import { printError, type OutputOptions } from './output.ts';

/** Runs one team, key, brand or credits command on the database alone (see src/admin-app.ts), then closes it. */
export async function withAdmin(opts: OutputOptions, fn: (admin: AdminApp) => Promise<void>): Promise<void> {
  let admin: AdminApp | undefined;
  try {
    const [{ openAdminApp }, { loadConfig }] = await Promise.all([import('../admin-app.ts'), import('../config.ts')]);
    admin = await openAdminApp(loadConfig());
    await fn(admin);
  } catch (e) {
    printError(e, opts);
    process.exitCode = 1;
  } finally {
    await admin?.close().catch(() => {});
  }
}
