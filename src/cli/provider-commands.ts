import type { Command } from 'commander';
import type { ProvidersReport } from '../services/provider-checks.ts';
import { printError } from './output.ts';

type Options = { json?: boolean };

/** The report as an operator reads it: one line per route and provider, then each finding that is not ok. */
function printReport(report: ProvidersReport): void {
  const rows = [
    ...report.routes.map((r) => ({ provider: r.provider, route: r.route, outcome: r.outcome, detail: r.detail, targets: r.targets })),
    ...report.others.map((r) => ({ provider: r.provider, route: '-', outcome: r.outcome, detail: r.detail, targets: r.targets })),
  ];
  if (rows.length === 0) {
    process.stdout.write('no provider is configured: every route goes to the built-in local engine\n');
    return;
  }
  const w = (k: 'provider' | 'route' | 'outcome') => Math.max(k.length, ...rows.map((r) => r[k].length));
  const line = (p: string, r: string, o: string, d: string) => `${p.padEnd(w('provider'))}  ${r.padEnd(w('route'))}  ${o.padEnd(w('outcome'))}  ${d}\n`;
  process.stdout.write(line('provider', 'route', 'outcome', 'detail'));
  for (const r of rows) {
    process.stdout.write(line(r.provider, r.route, r.outcome, r.detail));
    for (const t of r.targets) if (t.outcome !== 'ok') process.stdout.write(`${' '.repeat(w('provider') + w('route') + 4)}${t.target}: ${t.outcome}: ${t.detail}\n`);
  }
  process.stdout.write(report.ok ? '\nevery route is ready\n' : '\nsome routes are not ready: see above\n');
}

export function registerProviderCommands(program: Command): void {
  const providers = program.command('providers').description('the upstream providers this configuration uses');
  providers
    .command('check')
    .description("check each provider's key and each routed model or endpoint, with reads that cost nothing; exits 1 when a route is not ready")
    .option('--json', 'print one JSON object')
    .action(async (o: Options) => {
      const [{ loadConfig }, { buildEngines }, { buildProbes }, { checkProviders }] = await Promise.all([
        import('../config.ts'),
        import('../adapters/engines/from-config.ts'),
        import('../adapters/probes-from-config.ts'),
        import('../services/provider-checks.ts'),
      ]);
      try {
        const config = loadConfig();
        // A retired route stops `start`; here it is built anyway, to be reported beside the rest.
        const report = await checkProviders({ engines: buildEngines(config, { allowRetired: true }), probes: buildProbes(config) });
        if (o.json) process.stdout.write(`${JSON.stringify(report)}\n`);
        else printReport(report);
        process.exitCode = report.ok ? 0 : 1;
      } catch (e) {
        printError(e, o);
        process.exitCode = 2;
      }
    });
}
