import type { AdminApp, AdminService } from '../admin-app.ts';
import type { App } from '../app.ts';
import { printError, type OutputOptions } from './output.ts';

/** Opens what a command needs, runs the command, closes it whatever happened; a failure is printed and exits 1. */
async function withOpened<T extends { close: () => Promise<void> }>(opts: OutputOptions, open: () => Promise<T>, fn: (opened: T) => Promise<void>): Promise<void> {
  let opened: T | undefined;
  try {
    // A command parses the configuration and its input once: building zod's compiled fast path for
    // each schema (what a server's many requests gain from) costs it more than it saves.
    (await import('zod')).z.config({ jitless: true });
    opened = await open();
    await fn(opened);
  } catch (e) {
    printError(e, opts);
    process.exitCode = 1;
  } finally {
    await opened?.close().catch(() => {});
  }
}

// The modules are imported on use: the CLI starts without the service's module graph.

/** Runs one admin command against the whole app on the server's database, then closes it. */
export function withApp(opts: OutputOptions, fn: (app: App) => Promise<void>): Promise<void> {
  return withOpened(
    opts,
    async () => {
      const [{ buildApp }, { loadConfig }, { createLogger }] = await Promise.all([import('../app.ts'), import('../config.ts'), import('../log.ts')]);
      // Diagnostics go to stderr so that --json output stays one clean object on stdout. An admin
      // command runs even when a route names a model its provider has since retired (only the
      // service's start refuses it): it reads, or ends work the providers already hold.
      return buildApp(loadConfig(), createLogger(process.env.LOG_LEVEL ?? 'warn', process.stderr), { seed: false, allowRetired: true });
    },
    fn,
  );
}

/** Runs one team, key, user, brand, credits or audit command on the database and the services it names alone (see src/admin-app.ts), then closes it. */
export function withAdmin<K extends AdminService>(opts: OutputOptions, services: readonly K[], fn: (admin: AdminApp<K>) => Promise<void>): Promise<void> {
  return withOpened(
    opts,
    async () => {
      const [{ openAdminApp }, { loadConfig }] = await Promise.all([import('../admin-app.ts'), import('../config.ts')]);
      return openAdminApp(loadConfig(), services);
    },
    fn,
  );
}
