import type { App } from '../app.ts';
import { printError, type OutputOptions } from './output.ts';

/** Runs one admin command against the same database the server uses, then closes it. */
export async function withApp(opts: OutputOptions, fn: (app: App) => Promise<void>): Promise<void> {
  let app: App | undefined;
  try {
    // Imported on use: the CLI starts without the service's module graph.
    const [{ buildApp }, { loadConfig }, { createLogger }] = await Promise.all([import('../app.ts'), import('../config.ts'), import('../log.ts')]);
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
