import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { CLI_BIN, ROOT, runCli, stdoutJson, type CliResult } from '../support/cli-run.ts';
import { cloneTemplateDatabase } from '../support/database.ts';

const KEY_FORMAT = /^service_sk_[0-9A-Za-z]{38}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING_TEAM = '00000000-0000-4000-8000-000000000000';

let database: Awaited<ReturnType<typeof cloneTemplateDatabase>>;
let dataDir: string;
let sql: pg.Pool;

beforeAll(async () => {
  database = await cloneTemplateDatabase();
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-cli-'));
  sql = new pg.Pool({ connectionString: database.url, max: 2 });
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

function adforge(args: string[], env: Record<string, string> = {}, opts: { entry?: string; databaseUrl?: string } = {}): Promise<CliResult> {
  return runCli(
    args,
    { DATABASE_URL: opts.databaseUrl ?? database.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env },
    opts.entry ? { entry: opts.entry } : {},
  );
}

/** A command that must succeed: its stdout parsed as the one JSON object it prints. */
async function ok(args: string[], opts: { databaseUrl?: string } = {}): Promise<any> {
  const r = await adforge([...args, '--json'], {}, opts);
  expect(r.code, `adforge ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return stdoutJson(r);
}

/** A team made directly in the database, for tests about other commands. */
async function newTeam(opts: { tier?: string; credits?: number } = {}, db: pg.Pool = sql): Promise<string> {
  const r = await db.query<{ id: string }>(
    `insert into teams (name, tier, credits_limit) values ('Acme', $1, $2) returning id`,
    [opts.tier ?? 'starter', opts.credits ?? 1000],
  );
  return r.rows[0]!.id;
}

/** A key row made directly in the database; its clear text is never needed by the tests that use it. */
async function newKey(teamId: string, webhookUrl: string | null = null): Promise<{ id: string; webhookSecret: string }> {
  const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
  const r = await sql.query<{ id: string }>(
    `insert into api_keys (team_id, key_digest, key_hint, webhook_url, webhook_secret) values ($1, $2, 'service_sk_test…', $3, $4) returning id`,
    [teamId, randomBytes(32), webhookUrl, webhookSecret],
  );
  return { id: r.rows[0]!.id, webhookSecret };
}

/** A refused command: one {"error":{code,message}} object on stdout, and a non-zero exit status. */
function expectFailure(r: CliResult, code: string, message?: RegExp): void {
  const body = stdoutJson(r);
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  if (message) expect(body.error.message).toMatch(message);
  expect(r.code, `expected a non-zero exit status\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).not.toBe(0);
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

describe('adforge team create', () => {
  it('prints one JSON object {id,name,tier,credits_limit,credits_used}, Starter tier by default', async () => {
    const r = await adforge(['team', 'create', '--name', 'Acme Inc', '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const team = stdoutJson(r);
    expect(Object.keys(team).sort()).toEqual(['credits_limit', 'credits_used', 'id', 'name', 'tier']);
    expect(team).toEqual({ id: expect.stringMatching(UUID), name: 'Acme Inc', tier: 'starter', credits_limit: 1000, credits_used: 0 });
    const row = await sql.query('select name, tier, credits_limit, credits_used from teams where id = $1', [team.id]);
    expect(row.rows).toEqual([{ name: 'Acme Inc', tier: 'starter', credits_limit: 1000, credits_used: 0 }]);
  });

  it('takes --tier and --credits', async () => {
    const team = await ok(['team', 'create', '--name', 'Big', '--tier', 'business', '--credits', '250']);
    expect(team).toMatchObject({ name: 'Big', tier: 'business', credits_limit: 250, credits_used: 0 });
  });

  it('refuses an unknown tier: validation_error naming the tier, non-zero exit, no team stored', async () => {
    const r = await adforge(['team', 'create', '--name', 'Gold team', '--tier', 'gold', '--json']);
    expectFailure(r, 'validation_error', /tier/);
    const rows = await sql.query(`select 1 from teams where name = 'Gold team'`);
    expect(rows.rowCount).toBe(0);
  });

  it('without --json, reports the error on stderr and exits non-zero', async () => {
    const r = await adforge(['team', 'create', '--name', 'Gold team', '--tier', 'gold']);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^adforge: tier: /m);
  });

  it('loads the database, the configuration and the teams service, and no engine, storage, media, HTTP client, GraphQL or worker module', async () => {
    const log = path.join(dataDir, 'team-create-modules.txt');
    const recorder = pathToFileURL(path.join(ROOT, 'test/support/module-log.ts')).href;
    const r = await adforge(['team', 'create', '--name', 'Lean', '--json'], { NODE_OPTIONS: `--import ${recorder}`, ADFORGE_MODULE_LOG: log });
    expect(r.code, r.stderr).toBe(0);
    const loaded = (await fs.readFile(log, 'utf8')).split('\n').map((url) => url.replace(pathToFileURL(ROOT).href, ''));
    expect(loaded).toContain('src/services/teams.ts');
    const notForAnAdminCommand = [
      /^src\/(app|worker)\.ts$/,
      /^src\/(http|jobs)\//,
      /^src\/events\/(?!channels\.ts$)/, // the NOTIFY channels' names are all the teams service uses
      /^src\/adapters\/(storage|media|net)\//,
      /^src\/adapters\/engines\/.*(-engine|upstream-http)\.ts$/,
      /^src\/services\/(brands|uploads|generations)\b/,
      /\/node_modules\/(undici|sharp|file-type|graphile-worker|graphql|graphql-yoga|fastify|ws|@opentelemetry|@aws-sdk|pino)\//,
    ];
    expect(loaded.filter((m) => notForAnAdminCommand.some((p) => p.test(m)))).toEqual([]);
  });

  it('refuses --credits that is not a whole number before touching the database', async () => {
    const r = await adforge(['team', 'create', '--name', 'X', '--credits', '12.5', '--json']);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/--credits.*whole number/s);
  });
});

describe('adforge key create', () => {
  let teamId: string;
  beforeAll(async () => {
    teamId = await newTeam();
  });

  it('prints {id,key,webhook_secret,team_id} with a service_sk_ key', async () => {
    const created = await ok(['key', 'create', '--team', teamId]);
    expect(Object.keys(created).sort()).toEqual(['id', 'key', 'team_id', 'webhook_secret']);
    expect(created.id).toMatch(UUID);
    expect(created.key).toMatch(KEY_FORMAT);
    expect(created.webhook_secret).toEqual(expect.any(String));
    expect(created.webhook_secret.length).toBeGreaterThanOrEqual(32);
    expect(created.team_id).toBe(teamId);
  });

  it('stores only the SHA-256 digest of the key, never the key itself', async () => {
    const created = await ok(['key', 'create', '--team', teamId]);
    const row = await sql.query<{ key_digest: Buffer }>('select key_digest from api_keys where id = $1', [created.id]);
    expect(row.rows[0]!.key_digest.equals(sha256(created.key))).toBe(true);
    const all = await sql.query<{ t: string }>('select k::text as t from api_keys k');
    expect(all.rowCount).toBeGreaterThan(0);
    for (const { t } of all.rows) {
      expect(t).not.toContain(created.key);
      expect(t).not.toContain(created.key.slice('service_sk_'.length));
    }
  });

  it('keeps --webhook-url on the key', async () => {
    const created = await ok(['key', 'create', '--team', teamId, '--webhook-url', 'https://hooks.example.com/adforge']);
    const row = await sql.query('select webhook_url, webhook_secret from api_keys where id = $1', [created.id]);
    expect(row.rows).toEqual([{ webhook_url: 'https://hooks.example.com/adforge', webhook_secret: created.webhook_secret }]);
  });

  it('refuses a webhook URL that is not http(s)', async () => {
    const r = await adforge(['key', 'create', '--team', teamId, '--webhook-url', 'ftp://example.com/x', '--json']);
    expectFailure(r, 'validation_error', /webhook_url/);
  });

  it('answers not_found for an unknown team and creates nothing', async () => {
    const r = await adforge(['key', 'create', '--team', MISSING_TEAM, '--json']);
    expectFailure(r, 'not_found', /team/i);
    const rows = await sql.query('select 1 from api_keys where team_id = $1', [MISSING_TEAM]);
    expect(rows.rowCount).toBe(0);
  });

  it('answers validation_error for a team id that is not a UUID', async () => {
    const r = await adforge(['key', 'create', '--team', 'acme', '--json']);
    expectFailure(r, 'validation_error', /team/);
  });
});

describe('adforge key revoke and key set-webhook', () => {
  let teamId: string;
  beforeAll(async () => {
    teamId = await newTeam();
  });

  it('key revoke marks the key revoked', async () => {
    const { id } = await newKey(teamId);
    const r = await adforge(['key', 'revoke', id]);
    expect(r.code, r.stderr).toBe(0);
    const row = await sql.query<{ revoked_at: Date | null }>('select revoked_at from api_keys where id = $1', [id]);
    expect(row.rows[0]!.revoked_at).toBeInstanceOf(Date);
  });

  it('key revoke --json shows the key without its webhook secret', async () => {
    const { id, webhookSecret } = await newKey(teamId);
    const shown = await ok(['key', 'revoke', id]);
    expect(shown).toMatchObject({ id, team_id: teamId, revoked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(JSON.stringify(shown)).not.toContain(webhookSecret);
  });

  it('key revoke of an unknown key answers not_found', async () => {
    const r = await adforge(['key', 'revoke', MISSING_TEAM, '--json']);
    expectFailure(r, 'not_found');
  });

  it('key set-webhook sets the URL, and "none" clears it', async () => {
    const { id } = await newKey(teamId);
    const webhookOf = async () => (await sql.query('select webhook_url from api_keys where id = $1', [id])).rows[0]!.webhook_url;

    const set = await adforge(['key', 'set-webhook', id, 'https://example.com/hook']);
    expect(set.code, set.stderr).toBe(0);
    expect(await webhookOf()).toBe('https://example.com/hook');

    const cleared = await ok(['key', 'set-webhook', id, 'none']);
    expect(cleared.webhook_url).toBeNull();
    expect(await webhookOf()).toBeNull();
  });

  it('key set-webhook refuses an invalid URL and keeps the old one', async () => {
    const { id } = await newKey(teamId, 'https://example.com/old');
    const r = await adforge(['key', 'set-webhook', id, 'not a url', '--json']);
    expectFailure(r, 'validation_error', /webhook_url/);
    const row = await sql.query('select webhook_url from api_keys where id = $1', [id]);
    expect(row.rows[0]!.webhook_url).toBe('https://example.com/old');
  });
});

describe('adforge brand create', () => {
  let teamId: string;
  beforeAll(async () => {
    teamId = await newTeam();
  });

  it('prints the brand with the API field names', async () => {
    const brand = await ok([
      'brand', 'create', '--team', teamId, '--name', 'Acme Coffee',
      '--description', 'Small-batch roasters',
      '--industry', 'Food & drink',
      '--website-url', 'https://acme.example.com',
      '--brand-voice', 'warm, witty',
      '--target-audience', 'commuters',
      '--brand-color-primary', '#112233',
      '--brand-color-accent', '#abc',
      '--logo-url', 'https://acme.example.com/logo.png',
      '--reference-image-url', 'https://acme.example.com/ref.jpg',
    ]);
    expect(Object.keys(brand).sort()).toEqual(
      [
        'id', 'name', 'description', 'industry', 'website_url', 'brand_voice', 'target_audience',
        'brand_color_primary', 'brand_color_accent', 'logo_url', 'reference_image_url', 'created_at',
      ].sort(),
    );
    expect(brand).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Acme Coffee',
      description: 'Small-batch roasters',
      industry: 'Food & drink',
      website_url: 'https://acme.example.com',
      brand_voice: 'warm, witty',
      target_audience: 'commuters',
      brand_color_primary: '#112233',
      brand_color_accent: '#abc',
      logo_url: 'https://acme.example.com/logo.png',
      reference_image_url: 'https://acme.example.com/ref.jpg',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/),
    });
    expect(new Date(brand.created_at).toISOString()).toBe(brand.created_at);
    const row = await sql.query('select team_id from brands where id = $1', [brand.id]);
    expect(row.rows).toEqual([{ team_id: teamId }]);
  });

  it('needs only --team and --name', async () => {
    const brand = await ok(['brand', 'create', '--team', teamId, '--name', 'Plain']);
    expect(brand).toMatchObject({ name: 'Plain', website_url: null, brand_color_primary: null, logo_url: null });
  });

  it('refuses a colour that is not hex and stores nothing', async () => {
    const r = await adforge(['brand', 'create', '--team', teamId, '--name', 'Off colour', '--brand-color-primary', 'blue', '--json']);
    expectFailure(r, 'validation_error', /brand_color_primary/);
    const rows = await sql.query(`select 1 from brands where name = 'Off colour'`);
    expect(rows.rowCount).toBe(0);
  });

  it('answers not_found for an unknown team', async () => {
    const r = await adforge(['brand', 'create', '--team', MISSING_TEAM, '--name', 'Nobody', '--json']);
    expectFailure(r, 'not_found');
  });
});

describe('adforge credits', () => {
  it('credits set changes the limit of the current period and prints the team', async () => {
    const teamId = await newTeam();
    const team = await ok(['credits', 'set', '--team', teamId, '--limit', '750']);
    expect(team).toEqual({ id: teamId, name: 'Acme', tier: 'starter', credits_limit: 750, credits_used: 0 });
    const row = await sql.query('select credits_limit from teams where id = $1', [teamId]);
    expect(row.rows[0]!.credits_limit).toBe(750);
  });

  it('credits set refuses a limit below credits_used with validation_error', async () => {
    const teamId = await newTeam();
    await sql.query('update teams set credits_used = 40 where id = $1', [teamId]);
    const r = await adforge(['credits', 'set', '--team', teamId, '--limit', '39', '--json']);
    expectFailure(r, 'validation_error', /limit/);
    const row = await sql.query('select credits_limit from teams where id = $1', [teamId]);
    expect(row.rows[0]!.credits_limit).toBe(1000);
  });

  it('credits reset starts a new period: credits_used 0, the old usage kept in the ledger', async () => {
    const teamId = await newTeam();
    await sql.query('update teams set credits_used = 40 where id = $1', [teamId]);
    const team = await ok(['credits', 'reset', '--team', teamId]);
    expect(team).toMatchObject({ id: teamId, credits_used: 0, credits_limit: 1000 });
    const row = await sql.query('select credits_used from teams where id = $1', [teamId]);
    expect(row.rows[0]!.credits_used).toBe(0);
    const ledger = await sql.query(`select amount from credit_ledger where team_id = $1 and kind = 'period_reset'`, [teamId]);
    expect(ledger.rows).toEqual([{ amount: -40 }]);
  });

  it('credits reset of an unknown team answers not_found', async () => {
    const r = await adforge(['credits', 'reset', '--team', MISSING_TEAM, '--json']);
    expectFailure(r, 'not_found');
  });
});

describe('adforge migrate', () => {
  let run: CliResult;
  let ms: number;
  beforeAll(async () => {
    const t0 = Date.now();
    run = await adforge(['migrate', '--json']);
    ms = Date.now() - t0;
  }, 30_000);

  it('prints {"applied":[]} on a database that is up to date', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(stdoutJson(run)).toEqual({ applied: [] });
  });

  it('exits as soon as it is done: no idle database connection keeps the process alive', () => {
    // pg's pool drops an idle connection after 10 s: a pool left open shows as a run of 10 s or more.
    expect(ms).toBeLessThan(6_000);
  });
});

describe('secrets in output', () => {
  it('key create with LOG_LEVEL=debug shows the key and webhook secret once on stdout and never on stderr', async () => {
    const teamId = await newTeam();
    const r = await adforge(['key', 'create', '--team', teamId, '--json'], { LOG_LEVEL: 'debug' });
    expect(r.code, r.stderr).toBe(0);
    const created = stdoutJson(r);
    expect(r.stdout.split(created.key)).toHaveLength(2);
    expect(r.stdout.split(created.webhook_secret)).toHaveLength(2);
    expect(r.stderr).not.toContain(created.key);
    expect(r.stderr).not.toContain(created.webhook_secret);
  });

  it('key create without --json prints the key on stdout and nothing secret on stderr', async () => {
    const teamId = await newTeam();
    const r = await adforge(['key', 'create', '--team', teamId], { LOG_LEVEL: 'debug' });
    expect(r.code, r.stderr).toBe(0);
    const key = r.stdout.match(/service_sk_[0-9A-Za-z]+/)?.[0];
    expect(key).toMatch(KEY_FORMAT);
    expect(r.stdout).toMatch(/^team_id\s+[0-9a-f-]{36}$/m);
    expect(r.stderr).not.toContain(key!);
    expect(r.stderr).not.toMatch(/whsec_/);
  });
});

describe('bin/adforge.js', () => {
  it('runs the CLI: team create --json prints the team', async () => {
    const r = await adforge(['team', 'create', '--name', 'Via bin', '--json'], {}, { entry: CLI_BIN });
    expect(r.code, r.stderr).toBe(0);
    expect(stdoutJson(r)).toMatchObject({ name: 'Via bin', tier: 'starter', credits_used: 0 });
  });

  it("keeps Node's compile cache in the user's own cache folder, never the shared temp folder; a folder it cannot make leaves the command working", async () => {
    const home = path.join(dataDir, 'home');
    await fs.mkdir(home);
    const help = (env: Record<string, string | undefined>) =>
      runCli(['--help'], { NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined, XDG_CACHE_HOME: undefined, ...env }, { entry: CLI_BIN });
    const cached = async (dir: string) => (await fs.readdir(dir).catch(() => [])).length > 0;

    expect((await help({ HOME: home })).code).toBe(0);
    expect(await cached(path.join(home, '.cache/adforge/compile-cache'))).toBe(true);
    expect((await help({ HOME: home, XDG_CACHE_HOME: path.join(home, 'xdg') })).code).toBe(0);
    expect(await cached(path.join(home, 'xdg/adforge/compile-cache'))).toBe(true);
    expect((await help({ HOME: home, NODE_COMPILE_CACHE: path.join(home, 'chosen') })).code).toBe(0);
    expect(await cached(path.join(home, 'chosen'))).toBe(true);

    // A home that is a file: no folder can be made under it (as root too); same help, no cache.
    const file = path.join(dataDir, 'not-a-folder');
    await fs.writeFile(file, '');
    const r = await help({ HOME: file });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe((await help({ HOME: home })).stdout);
    expect(r.stdout).toMatch(/^Usage: adforge/);
  });
});

describe('keys made by the CLI, used against a running service on the same database', () => {
  let svc: TestService;
  let svcSql: pg.Pool;
  beforeAll(async () => {
    svc = await startTestService();
    svcSql = new pg.Pool({ connectionString: svc.databaseUrl, max: 1 });
  });
  afterAll(async () => {
    await svcSql?.end();
    await svc?.close();
  });

  const on = () => ({ databaseUrl: svc.databaseUrl });

  it('authenticate GET /api/v1/account/credits', async () => {
    const teamId = await newTeam({ credits: 300 }, svcSql);
    const { key } = await ok(['key', 'create', '--team', teamId], on());
    const res = await svc.api('GET', '/api/v1/account/credits', { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ credits_used: 0, credits_limit: 300, credits_remaining: 300 });
  });

  it('stop working once revoked: 401 unauthorized', async () => {
    const teamId = await newTeam({}, svcSql);
    const { id, key } = await ok(['key', 'create', '--team', teamId], on());
    expect((await svc.api('GET', '/api/v1/account/credits', { key })).status).toBe(200);
    await ok(['key', 'revoke', id], on());
    const res = await svc.api('GET', '/api/v1/account/credits', { key });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 'unauthorized', message: 'Missing or invalid API key' } });
  });

  it('of a free-tier team get 403 forbidden', async () => {
    const teamId = await newTeam({ tier: 'free', credits: 0 }, svcSql);
    const { key } = await ok(['key', 'create', '--team', teamId], on());
    const res = await svc.api('GET', '/api/v1/account/credits', { key });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
  });

  it('see a limit changed by credits set at once', async () => {
    const teamId = await newTeam({}, svcSql);
    const { key } = await ok(['key', 'create', '--team', teamId], on());
    await ok(['credits', 'set', '--team', teamId, '--limit', '42'], on());
    const res = await svc.api('GET', '/api/v1/account/credits', { key });
    expect(res.body).toEqual({ credits_used: 0, credits_limit: 42, credits_remaining: 42 });
  });
});

describe('adforge user create and user link', () => {
  it('makes a person of the team and prints a one-time link that signs them in to the dashboard', async () => {
    const svc = await startTestService();
    try {
      const on = { databaseUrl: svc.databaseUrl };
      const team = await svc.team();
      const made = await ok(['user', 'create', '--team', team.teamId, '--email', 'Boss@Example.com', '--role', 'owner'], on);
      expect(made).toMatchObject({ user: { email: 'boss@example.com', role: 'owner', active: false }, url: expect.stringMatching(/\/welcome#[A-Za-z0-9_-]{43}$/) });
      const welcome = await svc.api('POST', '/auth/welcome', { body: { token: made.url.split('#')[1], password: 'the boss password' } });
      expect(welcome.status).toBe(200);
      expect(welcome.body.user.role).toBe('owner');

      expectFailure(await adforge(['user', 'create', '--team', team.teamId, '--email', 'boss@example.com', '--json'], {}, on), 'conflict');
      expectFailure(await adforge(['user', 'create', '--team', team.teamId, '--email', 'not-an-email', '--json'], {}, on), 'validation_error', /^email: /);
      expectFailure(await adforge(['user', 'create', '--team', team.teamId, '--email', 'x@example.com', '--role', 'admin', '--json'], {}, on), 'validation_error', /^role: /);
      expectFailure(await adforge(['user', 'create', '--team', MISSING_TEAM, '--email', 'y@example.com', '--json'], {}, on), 'not_found');

      // A new link replaces a lost password; the old password stops working.
      const again = await ok(['user', 'link', '--email', 'boss@example.com'], on);
      expect((await svc.api('POST', '/auth/welcome', { body: { token: again.url.split('#')[1], password: 'a brand new password' } })).status).toBe(200);
      expect((await svc.api('POST', '/auth/sign-in', { body: { email: 'boss@example.com', password: 'the boss password' } })).status).toBe(401);
      expect((await svc.api('POST', '/auth/sign-in', { body: { email: 'boss@example.com', password: 'a brand new password' } })).status).toBe(200);
      expectFailure(await adforge(['user', 'link', '--email', 'nobody@example.com', '--json'], {}, on), 'not_found');
    } finally {
      await svc.close();
    }
  });
});
