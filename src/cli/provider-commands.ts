import { createInterface } from 'node:readline/promises';
import { type Command, InvalidArgumentError } from 'commander';
import type { Config } from '../config.ts';
import type { ProvidersReport } from '../services/provider-checks.ts';
import type { SpendOutcome, SpendPlan } from '../services/provider-spend.ts';
import { printError } from './output.ts';

type Options = { json?: boolean; spend?: boolean; yes?: boolean; videoUrl?: string; imageUrl?: string; timeoutMinutes?: number };

const minutes = (v: string): number => {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 240) throw new InvalidArgumentError('must be a whole number of minutes from 1 to 240');
  return Number(v);
};

const say = (o: Options, text: string) => (o.json ? process.stderr : process.stdout).write(text);

function printPlans(o: Options, plans: readonly SpendPlan[]): void {
  say(o, '\nthe smallest real generation per route (--spend):\n');
  for (const p of plans) {
    say(o, p.skipped ? `  ${p.route}: skipped: ${p.skipped}\n` : `  ${p.route} via ${p.providers.join(' then ')}: ${p.operation} ${JSON.stringify(p.body)}: ${p.credits} credits\n`);
  }
}

async function confirmed(o: Options, plans: readonly SpendPlan[]): Promise<boolean> {
  const sent = plans.filter((p) => !p.skipped);
  const credits = sent.reduce((n, p) => n + (p.credits ?? 0), 0);
  say(o, `\n${sent.length} generations, ${credits} credits on adforge's price table; each provider bills its own account for its part.\n`);
  if (o.yes) return true;
  if (!process.stdin.isTTY) throw new Error('--spend makes real, paid generations: add --yes to confirm it when not at a terminal');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question('Make them? [y/N] ')).trim());
  } finally {
    rl.close();
  }
}

/**
 * --spend: only routes whose free check passed, through the service's own pipeline (a team of
 * its own, the create's pricing, a worker in this process), each result read back and checked.
 */
async function spend(config: Readonly<Config>, report: ProvidersReport, o: Options): Promise<{ plans: SpendPlan[]; team_id?: string; outcomes: SpendOutcome[] } | undefined> {
  if (report.routes.some((r) => r.outcome === 'retired')) throw new Error('--spend needs a configuration that starts: route the retired models elsewhere first');
  const [{ buildApp }, { createLogger }, { startWorker }, { createProviderSpend }, { VOICES }] = await Promise.all([
    import('../app.ts'),
    import('../log.ts'),
    import('../worker.ts'),
    import('../services/provider-spend.ts'),
    import('../domain/catalogue/voices.ts'),
  ]);
  // Seeded like a start: the talking-avatar requests use a platform avatar and a catalogue voice.
  const app = await buildApp(config, createLogger(process.env.LOG_LEVEL ?? 'warn', process.stderr));
  try {
    const s = app.services;
    const spender = createProviderSpend({ db: app.db, storage: app.storage, teams: s.teams, creator: s.generationCreator, reader: s.generationReader, canceller: s.generationCanceller });
    const failedFree = new Map(report.routes.filter((r) => r.outcome !== 'ok').map((r) => [r.route, `${r.provider}: ${r.outcome}: ${r.detail}`]));
    const routes = [...new Set(report.routes.map((r) => r.route))].map((route) => ({ route, providers: report.routes.filter((r) => r.route === route).map((r) => r.provider) }));
    const avatar = (await s.avatars.listPlatform()).data[0];
    const template = (await s.templates.listCaptionTemplates({ limit: '1' })).data[0] as { id?: string } | undefined;
    if (!avatar) throw new Error('no platform avatar is stored: run `adforge migrate` and start the service once');
    const inputs = { avatarId: avatar.id, voiceId: VOICES[0]!.id, ...(template?.id ? { templateId: template.id } : {}), ...(o.videoUrl ? { videoUrl: o.videoUrl } : {}), ...(o.imageUrl ? { imageUrl: o.imageUrl } : {}) };
    const ready = routes.filter((r) => !failedFree.has(r.route));
    const plans: SpendPlan[] = [
      ...routes.filter((r) => failedFree.has(r.route)).map((r) => ({ ...r, skipped: `the free check failed (${failedFree.get(r.route)})` })),
      ...(await spender.plan(ready, inputs)),
    ];
    printPlans(o, plans);
    if (!plans.some((p) => !p.skipped)) return { plans, outcomes: [] };
    if (!(await confirmed(o, plans))) {
      say(o, 'nothing was sent\n');
      return undefined;
    }
    const worker = await startWorker(app);
    try {
      return { plans, ...(await spender.run(plans, { timeoutMs: (o.timeoutMinutes ?? 20) * 60_000 })) };
    } finally {
      await worker.drain(10_000).catch(() => {});
    }
  } finally {
    await app.close().catch(() => {});
  }
}

/** The report as an operator reads it: one line per route and provider, then each finding that is not ok (a deprecated model among them) and each retired model the route leaves out. */
function printReport(report: ProvidersReport): void {
  const rows = [
    ...report.routes.map((r) => ({ provider: r.provider, route: r.route, outcome: r.outcome, detail: r.detail, targets: r.targets, lifecycle: r.lifecycle })),
    ...report.others.map((r) => ({ provider: r.provider, route: '-', outcome: r.outcome, detail: r.detail, targets: r.targets, lifecycle: [] })),
  ];
  if (rows.length === 0) {
    process.stdout.write('no provider is configured: every route goes to the built-in local engine\n');
    return;
  }
  const w = (k: 'provider' | 'route' | 'outcome') => Math.max(k.length, ...rows.map((r) => r[k].length));
  const line = (p: string, r: string, o: string, d: string) => `${p.padEnd(w('provider'))}  ${r.padEnd(w('route'))}  ${o.padEnd(w('outcome'))}  ${d}\n`;
  const indent = ' '.repeat(w('provider') + w('route') + 4);
  process.stdout.write(line('provider', 'route', 'outcome', 'detail'));
  for (const r of rows) {
    process.stdout.write(line(r.provider, r.route, r.outcome, r.detail));
    for (const t of r.targets) if (t.outcome !== 'ok') process.stdout.write(`${indent}${t.target}: ${t.outcome}: ${t.detail}\n`);
    // A retired model the route covers among live ones: not a failure of the route (it is refused at create), but said.
    for (const l of r.lifecycle) {
      if (l.status === 'retired' && !l.stops) process.stdout.write(`${indent}${l.name} (${l.id}): retired on ${l.date}, refused at create unless another provider of the route makes it; ${l.instead}\n`);
    }
  }
  process.stdout.write(report.ok ? '\nevery route is ready\n' : '\nsome routes are not ready: see above\n');
}

export function registerProviderCommands(program: Command): void {
  const providers = program.command('providers').description('the upstream providers this configuration uses');
  providers
    .command('check')
    .description("check each provider's key and each routed model or endpoint, with reads that cost nothing; exits 1 when a route is not ready")
    .option('--json', 'print one JSON object')
    .option('--spend', 'then make the smallest real (paid) generation per route, priced and confirmed first, and check each result')
    .option('--yes', 'with --spend: do not ask for confirmation')
    .option('--video-url <url>', 'with --spend: a public video for the routes that need one (swap-avatar, localize, video edit)')
    .option('--image-url <url>', 'with --spend: a public image for the routes that need one (image edit, frame models)')
    .option('--timeout-minutes <n>', 'with --spend: how long to wait for the generations (default 20); later ones are cancelled and refunded', minutes)
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
        const report = await checkProviders({ engines: await buildEngines(config, { allowRetired: true }), probes: buildProbes(config) });
        if (!o.json) printReport(report);
        const spent = o.spend ? await spend(config, report, o) : undefined;
        if (spent && !o.json) for (const x of spent.outcomes) process.stdout.write(`  ${x.route} via ${x.provider}: ${x.status}: ${x.detail} (generation ${x.generation_id})\n`);
        const spendOk = !spent || spent.outcomes.every((x) => x.status === 'completed');
        if (o.json) process.stdout.write(`${JSON.stringify({ ...report, ok: report.ok && spendOk, ...(spent ? { spend: spent } : {}) })}\n`);
        process.exitCode = report.ok && spendOk ? 0 : 1;
      } catch (e) {
        printError(e, o);
        process.exitCode = 2;
      }
    });
}
