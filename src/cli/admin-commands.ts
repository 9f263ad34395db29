import { type Command, InvalidArgumentError } from 'commander';
import { print } from './output.ts';
import { withAdmin, withApp } from './with-app.ts';
import { registerTeamDataCommands } from './team-data-commands.ts';

type Json = { json?: boolean };

const int = (v: string): number => {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a whole number');
  return Number(v);
};

export function registerAdminCommands(program: Command): void {
  const team = program.command('team').description('teams');
  registerTeamDataCommands(team);
  team
    .command('create')
    .requiredOption('--name <name>')
    .option('--tier <tier>', 'free | starter | pro | business', 'starter')
    .option('--credits <limit>', 'credits for the current period (default: by tier)', int)
    .option('--json', 'print one JSON object')
    .action((o: Json & { name: string; tier: string; credits?: number }) =>
      withAdmin(o, ['teams'], async (admin) =>
        print({ ...(await admin.teams.createTeam({ name: o.name, tier: o.tier, credits_limit: o.credits })) }, o),
      ),
    );

  team
    .command('retention')
    .description("how many days the team's generated files are kept: --days N (at most the server's RETENTION_DAYS, when set), --clear for the server's; neither shows it")
    .requiredOption('--team <team_id>')
    .option('--days <n>', 'keep the files this many days', int)
    .option('--clear', "use the server's RETENTION_DAYS again")
    .option('--json', 'print one JSON object')
    .action((o: Json & { team: string; days?: number; clear?: boolean }) =>
      withApp(o, async (app) => {
        if (o.days !== undefined && o.clear) throw new InvalidArgumentError('give --days or --clear, not both');
        const { operatorActor } = await import('../services/audit.ts');
        const retention =
          o.days !== undefined || o.clear ? await app.services.retention.set(o.team, { days: o.clear ? null : o.days }, operatorActor()) : await app.services.retention.get(o.team);
        print({ team_id: o.team, ...retention }, o);
      }),
    );

  const key = program.command('key').description('API keys');
  key
    .command('create')
    .requiredOption('--team <team_id>')
    .option('--webhook-url <url>')
    .option('--json', 'print one JSON object')
    .action((o: Json & { team: string; webhookUrl?: string }) =>
      withAdmin(o, ['teams'], async (admin) => print({ ...(await admin.teams.createKey(o.team, { webhook_url: o.webhookUrl ?? null })) }, o)),
    );
  key
    .command('revoke <key_id>')
    .option('--json', 'print one JSON object')
    .action((id: string, o: Json) => withAdmin(o, ['teams'], async (admin) => print({ ...(await admin.teams.revokeKey(id)) }, o)));
  key
    .command('set-webhook <key_id> <url>')
    .description('set the webhook URL of a key ("none" removes it)')
    .option('--json', 'print one JSON object')
    .action((id: string, url: string, o: Json) =>
      withAdmin(o, ['teams'], async (admin) => print({ ...(await admin.teams.setWebhook(id, url === 'none' ? null : url)) }, o)),
    );

  key
    .command('set-limit <key_id>')
    .description("a key's own rate limit, a token bucket: tokens per minute and the burst (a read takes 1, a write 5); --tier goes back to its tier's")
    .option('--per-minute <n>', 'tokens refilled per minute')
    .option('--burst <n>', 'tokens the bucket holds')
    .option('--tier', "use the key's tier limit again")
    .option('--json', 'print one JSON object')
    .action((id: string, o: Json & { perMinute?: string; burst?: string; tier?: boolean }) =>
      withAdmin(o, ['teams'], async (admin) =>
        print({ ...(await admin.teams.setRateLimit(id, o.tier ? null : { per_minute: o.perMinute, burst: o.burst })) }, o),
      ),
    );

  const user = program.command('user').description("the dashboard's people");
  user
    .command('create')
    .description('a person of a team, and the one-time link (24 h) with which they sign in and choose a password')
    .requiredOption('--team <team_id>')
    .requiredOption('--email <email>')
    .option('--role <role>', 'owner | member', 'member')
    .option('--json', 'print one JSON object')
    .action((o: Json & { team: string; email: string; role: string }) =>
      withAdmin(o, ['members'], async (admin) => print({ ...(await admin.members.createUser(o.team, { email: o.email, role: o.role })) }, o)),
    );
  user
    .command('link')
    .description('a new one-time sign-in link for a person who lost theirs or their password')
    .requiredOption('--email <email>')
    .option('--json', 'print one JSON object')
    .action((o: Json & { email: string }) => withAdmin(o, ['members'], async (admin) => print({ ...(await admin.members.newSignInLink({ email: o.email })) }, o)));

  const generation = program.command('generation').description('generations, as operators see them');
  generation
    .command('show <generation_id>')
    .description('a generation with the engine that made it and every upstream attempt (provider job id, state changes, cost)')
    .option('--json', 'print one JSON object')
    .action((id: string, o: Json) => withApp(o, async (app) => print({ ...(await app.services.generationReader.operatorView(id)) }, o)));

  program
    .command('engines')
    .description('which engine makes each operation (and whether it is the built-in demo renderer), routes (providers in fail-over order), each provider with its circuit breaker and the jobs it holds now')
    .option('--json', 'print one JSON object')
    .action((o: Json) =>
      withApp(o, async (app) => {
        const status = await app.services.engineStatus.status();
        if (o.json) return print({ ...status }, o);
        const { anyDemo, describePlan, DEMO_HOW_TO } = await import('../domain/who-makes-what.ts');
        process.stdout.write(`who makes what\n${describePlan(status.operations).map((l) => `  ${l}\n`).join('')}`);
        if (anyDemo(status.operations)) process.stdout.write(`\n${DEMO_HOW_TO}\n`);
        process.stdout.write('\n');
        const { operations: _operations, ...rest } = status;
        print(rest, o);
      }),
    );

  const brand = program.command('brand').description("a team's brands");
  brand
    .command('create')
    .requiredOption('--team <team_id>')
    .requiredOption('--name <name>')
    .option('--description <text>')
    .option('--industry <text>')
    .option('--website-url <url>')
    .option('--brand-voice <text>')
    .option('--target-audience <text>')
    .option('--brand-color-primary <hex>')
    .option('--brand-color-accent <hex>')
    .option('--logo-url <url>')
    .option('--reference-image-url <url>')
    .option('--json', 'print one JSON object')
    .action((o: Json & Record<string, string | undefined>) =>
      withAdmin(o, ['brands', 'teams'], async (admin) => {
        const team = await admin.teams.getTeam(o.team!);
        const brand = await admin.brands.create(team.id, {
          name: o.name,
          description: o.description,
          industry: o.industry,
          website_url: o.websiteUrl,
          brand_voice: o.brandVoice,
          target_audience: o.targetAudience,
          brand_color_primary: o.brandColorPrimary,
          brand_color_accent: o.brandColorAccent,
          logo_url: o.logoUrl,
          reference_image_url: o.referenceImageUrl,
        });
        print({ ...brand }, o);
      }),
    );

  const credits = program.command('credits').description("a team's credits");
  credits
    .command('set')
    .requiredOption('--team <team_id>')
    .requiredOption('--limit <n>', 'the credit limit of the current period', int)
    .option('--json', 'print one JSON object')
    .action((o: Json & { team: string; limit: number }) =>
      withAdmin(o, ['credits', 'teams'], async (admin) => {
        await admin.credits.setLimit(o.team, o.limit);
        print({ ...(await admin.teams.getTeam(o.team)) }, o);
      }),
    );
  credits
    .command('reset')
    .description('start a new billing period: credits_used goes back to 0')
    .requiredOption('--team <team_id>')
    .option('--json', 'print one JSON object')
    .action((o: Json & { team: string }) =>
      withAdmin(o, ['credits', 'teams'], async (admin) => {
        await admin.credits.resetPeriod(o.team);
        print({ ...(await admin.teams.getTeam(o.team)) }, o);
      }),
    );
}
