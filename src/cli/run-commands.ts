import type { Command } from 'commander';
// The service's modules are imported when a command runs, not when the CLI starts: `--help`, a
// usage error and every other command do not pay for them.
import type { App } from '../app.ts';
import type { HttpServer } from '../http/server.ts';
import type { startWorker } from '../worker.ts';
import { print, printError } from './output.ts';

type Role = { http: boolean; worker: boolean; demo: boolean };

/**
 * Runs until SIGINT/SIGTERM, then drains within SHUTDOWN_GRACE_SECONDS: /readyz turns 503, the
 * listener takes no new connection while open requests finish, the worker takes no new job while
 * running ones finish or are released; then the database closes and the process exits 0.
 */
async function runService(role: Role): Promise<void> {
  // A worker alone never loads the HTTP server (Fastify, the GraphQL schema, the dashboard's routes),
  // nor a server alone the job runner: each process holds only what its role runs.
  const [{ buildApp }, { loadConfig }, { createLogger }, { ensureDemoTeam }, { startMetricsListener }, { checkBinaries }] = await Promise.all([
    import('../app.ts'),
    import('../config.ts'),
    import('../log.ts'),
    import('../services/bootstrap.ts'),
    import('../http/metrics-route.ts'),
    import('../services/binaries-check.ts'),
  ]);
  const serveHttp = role.http ? (await import('../http/server.ts')).startHttpServer : undefined;
  const runJobs = role.worker ? (await import('../worker.ts')).startWorker : undefined;
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  let app: App | undefined;
  let http: HttpServer | undefined;
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  let metrics: Awaited<ReturnType<typeof startMetricsListener>> | undefined;
  let starting: Promise<void> | undefined;
  const shutdown = async (signal: string) => {
    const graceMs = config.shutdownGraceSeconds * 1000;
    log.info({ signal, grace_seconds: config.shutdownGraceSeconds }, 'shutting down: draining');
    // A signal during the start waits for it: a worker already running jobs is drained, not cut.
    await starting?.catch(() => {});
    app?.services.readiness.drain();
    await Promise.all([
      http?.drain(graceMs).catch((e: unknown) => log.error({ err: e }, 'http drain')),
      worker?.drain(graceMs).catch((e: unknown) => log.error({ err: e }, 'worker drain')),
    ]);
    await metrics?.close();
    await app?.close().catch((e: unknown) => log.error({ err: e }, 'database close'));
    log.info('drained; exiting');
    process.exit(0);
  };
  // One drain, whatever asks for it: SIGHUP too (a closed terminal), which would otherwise end the
  // process at once and leave its embedded PostgreSQL running. A repeat, of the same signal or
  // another, is ignored: one stop often arrives twice (a terminal's Ctrl-C, `timeout` or a group
  // stop reaches every process of the group, and bin/adforge.js passes its own copy on to the
  // service it runs), and a second drain would close the database under the first. The drain ends
  // by itself within the grace; SIGKILL (or SIGQUIT, Ctrl-\) cuts it.
  let stopping: string | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return void log.warn({ signal, draining_since: stopping }, 'already draining; signal ignored');
    stopping = signal;
    void shutdown(signal);
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);

  starting = (async () => {
    await checkBinaries(config, log);
    app = await buildApp(config, log, { seed: role.http });
    if (runJobs) worker = await runJobs(app);
    if (serveHttp) http = await serveHttp(app);
    if (config.metrics.port) metrics = await startMetricsListener(app.metrics, config.metrics);
  })();
  try {
    await starting;
  } catch (e) {
    log.fatal({ err: e }, 'failed to start');
    process.stderr.write(`adforge: ${(e as Error).message}\n`);
    await http?.close().catch(() => {});
    await worker?.stop().catch(() => {});
    await app?.close().catch(() => {});
    process.exit(1);
  }
  if (http) {
    const base = `https://localhost:${http.port}`;
    log.info({ port: http.port }, 'listening');
    process.stdout.write(`\nadforge is running\n  dashboard ${base}/\n  REST      ${base}/api/v1\n  GraphQL   ${base}/graphql\n  health    ${base}/healthz\n`);
    if (metrics) process.stdout.write(`  metrics   http://${config.metrics.host}:${metrics.port}/metrics\n`);
    if (!config.tlsCertFile) process.stdout.write(`  TLS       self-signed certificate in ${config.dataDir}/tls (curl -k)\n`);
  }
  if (app && (http || role.worker)) process.stdout.write(await whoMakesWhatBanner(app));
  if (role.demo) {
    const demo = await ensureDemoTeam(app!);
    if (demo) {
      process.stdout.write(
        `\nA demo team was created (Starter tier). Its API key is shown only this once:\n\n  ${demo.key}\n\n` +
          `  team id         ${demo.team_id}\n  webhook secret  ${demo.webhook_secret}\n\n` +
          `Try: curl -k -H "Authorization: Bearer ${demo.key}" https://localhost:${http?.port ?? config.port}/api/v1/products\n\n` +
          `The dashboard: open this one-time link to sign in as the demo team's owner (${demo.owner.user.email})\n` +
          `and choose a password (valid until ${demo.owner.expires_at}; a new one: adforge user link --email ${demo.owner.user.email}):\n\n  ${demo.owner.url}\n\n`,
      );
    }
  }
}

/** The start banner's "who makes what": each operation's engines, and plainly when they are the built-in demo renderer. */
async function whoMakesWhatBanner(app: App): Promise<string> {
  const { anyDemo, describePlan, DEMO_NEXT_STEP } = await import('../domain/who-makes-what.ts');
  const plan = app.services.engineStatus.operations();
  const lines = describePlan(plan).map((l) => `  ${l}\n`).join('');
  if (!anyDemo(plan)) return `\nWho makes what (adforge engines):\n${lines}`;
  const all = plan.every((o) => o.demo);
  return (
    `\nWho makes what (adforge engines):\n${lines}\n` +
    (all
      ? 'DEMO MODE: no AI provider is connected. Every image and video is drawn by the built-in demo renderer,\n'
      : 'The operations marked "local (demo)" are drawn by the built-in demo renderer,\n') +
    `which writes the prompt on a gradient with a "DEMO RENDER" mark: it is not AI.\n${DEMO_NEXT_STEP}\n`
  );
}

export function registerRunCommands(program: Command): void {
  program
    .command('start')
    .description('run the HTTPS server and a worker in one process (first start: a demo team and key)')
    .action(() => runService({ http: true, worker: true, demo: true }));
  program
    .command('serve')
    .description('run the HTTPS server only')
    .action(() => runService({ http: true, worker: false, demo: false }));
  program
    .command('worker')
    .description('run a job worker only')
    .action(() => runService({ http: false, worker: true, demo: false }));
  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .option('--json', 'print one JSON object')
    .action(async (o: { json?: boolean }) => {
      const [{ migrateDatabase }, { loadConfig }, { createLogger }] = await Promise.all([import('../app.ts'), import('../config.ts'), import('../log.ts')]);
      const config = loadConfig();
      const log = createLogger(process.env.LOG_LEVEL ?? 'warn', process.stderr);
      try {
        print({ applied: await migrateDatabase(config, log) }, o);
      } catch (e) {
        printError(e, o);
        process.exitCode = 1;
      }
    });
}
