import { buildApp, type App } from '../app.ts';
import { loadConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { printError, type OutputOptions } from './output.ts';

/** Runs one admin command against the same database the server uses, then closes it. */
export async function withApp(opts: OutputOptions, fn: (app: App) => Promise<void>): Promise<void> {
  let app: App | undefined;
  try {
    const config = loadConfig();
    // Diagnostics go to stderr so that --json output stays one clean object on stdout.
    const log = createLogger(process.env.LOG_LEVEL ?? 'warn', process.stderr);
    app = await buildApp(config, log, { seed: false });
    await fn(app);
  } catch (e) {
    printError(e, opts);
    process.exitCode = 1;
  } finally {
    await app?.close().catch(() => {});
  }
}
