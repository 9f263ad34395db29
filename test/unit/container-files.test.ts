import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { registerAdminCommands } from '../../src/cli/admin-commands.ts';
import { registerCampaignCommands } from '../../src/cli/campaign/commands.ts';
import { registerRunCommands } from '../../src/cli/run-commands.ts';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.ts';
import { ROOT } from '../support/cli-run.ts';

// Docker is not on every machine that runs these tests: the Dockerfile and compose.yaml are read
// and held to the CLI and the configuration they drive instead.

const program = new Command('adforge');
registerRunCommands(program);
registerAdminCommands(program);
registerCampaignCommands(program);
const COMMANDS = new Set(program.commands.map((c) => c.name()));
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name: string | undefined;
  steps: Instruction[];
}

/**
 * Dockerfile instructions by stage: comments dropped, continuation lines joined. An ARG before the
 * first FROM is a build argument of the FROM lines: each stage's base is read with its default.
 */
function dockerStages(text: string): Stage[] {
  const lines = text.split('\n').filter((l) => !/^\s*#/.test(l));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  const globalArgs = new Map<string, string>();
  for (const line of joined.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const [, op, args] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (!op) throw new Error(`not an instruction: ${line}`);
    if (op.toUpperCase() === 'ARG' && stages.length === 0) {
      const [name, value] = args!.split('=');
      globalArgs.set(name!, value ?? '');
    } else if (op.toUpperCase() === 'FROM') {
      const [, from, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args!)!;
      const base = from!.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string, b: string) => globalArgs.get(a ?? b) ?? '');
      stages.push({ from: base, name, steps: [] });
    } else stages.at(-1)!.steps.push({ op: op.toUpperCase(), args: args! });
  }
  return stages;
}

const execForm = (args: string): string[] => JSON.parse(args) as string[];

describe('Dockerfile', () => {
  const stages = dockerStages(read('Dockerfile'));
  const runtime = stages.at(-1)!;
  const steps = (s: Stage, op: string) => s.steps.filter((i) => i.op === op).map((i) => i.args);

  it('is multi-stage on Node 24, the runtime without the build tools', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const s of stages) expect(s.from).toMatch(/^node:24(\.|-|$)/);
    const build = stages.find((s) => steps(s, 'RUN').some((r) => r.includes('npm run build:web')))!;
    expect(JSON.parse(read('package.json')).scripts['build:web']).toBeTruthy();
    expect(steps(runtime, 'COPY')).toContain(`--from=${build.name} /app/web/dist ./web/dist`);
    // node_modules come from a stage that installed production dependencies only.
    const modules = steps(runtime, 'COPY').find((c) => c.includes('node_modules'))!;
    const from = stages.find((s) => s.name === /--from=(\S+)/.exec(modules)![1])!;
    expect(steps(from, 'RUN').some((r) => /npm ci\b.*--omit=dev/.test(r))).toBe(true);
    expect(steps(runtime, 'RUN').some((r) => /npm (ci|install)/.test(r))).toBe(false);
  });

  it('runs as a non-root user, the CLI its entry point and one of its commands its default', () => {
    expect(steps(runtime, 'USER')).toEqual(['node']);
    const entry = execForm(steps(runtime, 'ENTRYPOINT')[0]!);
    expect(entry.slice(-2)).toEqual(['node', 'bin/adforge.js']);
    const cmd = execForm(steps(runtime, 'CMD')[0]!);
    expect(COMMANDS.has(cmd[0]!)).toBe(true);
    for (const c of ['serve', 'worker', 'migrate']) expect(COMMANDS.has(c)).toBe(true);
  });

  it('copies what exists, sets only settings the configuration reads, and exposes its ports', () => {
    for (const c of steps(runtime, 'COPY').filter((c) => !c.startsWith('--from'))) {
      const sources = c.split(/\s+/).slice(0, -1);
      for (const src of sources) expect(fs.existsSync(path.join(ROOT, src)), src).toBe(true);
    }
    const env = Object.fromEntries(
      steps(runtime, 'ENV')
        .join(' ')
        .split(/\s+/)
        .map((kv) => kv.split('=') as [string, string]),
    );
    for (const k of Object.keys(env)) if (!k.startsWith('NODE_')) expect(CONFIG_VARIABLES, k).toContain(k);
    // Its metrics listener is on 0.0.0.0 (for a scraper outside the container): the image does not start without METRICS_TOKEN.
    expect(() => loadConfig(env)).toThrow(/METRICS_HOST=0\.0\.0\.0 is not a loopback address.*METRICS_TOKEN/);
    const config = loadConfig({ ...env, METRICS_TOKEN: 'a-token-of-16-chars-or-more' });
    expect(steps(runtime, 'EXPOSE').join(' ').split(/\s+/).map(Number).sort()).toEqual([config.port, config.metrics.port].sort());
    expect(config.metrics.host).toBe('0.0.0.0');
    expect(config.dataDir).toBe('/data');
  });
});

describe('Dockerfile: what the image needs at run time is done at build time (issue 27)', () => {
  const text = read('Dockerfile');
  const stages = dockerStages(text);
  const runtime = stages.at(-1)!;
  const runs = (s: Stage) => s.steps.filter((i) => i.op === 'RUN').map((i) => i.args);
  const modules = runtime.steps.find((i) => i.op === 'COPY' && i.args.includes('node_modules'))!.args;
  const deps = stages.find((s) => s.name === /--from=(\S+)/.exec(modules)![1])!;

  it('takes the base image as a build argument, node:24-bookworm-slim by default (a registry mirror or a local stand-in)', () => {
    expect(text).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
    for (const line of text.split('\n').filter((l) => /^FROM\s/.test(l))) expect(line).toMatch(/^FROM \$\{NODE_IMAGE\} AS \w+$/);
    // A `# syntax=` line would make BuildKit pull its frontend from Docker Hub first.
    expect(text).not.toMatch(/^#\s*syntax=/m);
  });

  it("makes the embedded PostgreSQL's library links as root in the stage the node_modules come from, and checks each one", () => {
    // npm ci --ignore-scripts skips the package's postinstall, which makes libpq.so.5 and the others:
    // initdb could not load its libraries and `adforge start` never became healthy.
    const links = runs(deps).find((r) => r.includes('hydrate-symlinks.js'));
    expect(links, 'a RUN of the package\'s hydrate-symlinks.js in the deps stage').toBeDefined();
    expect(links).toContain('pg-symlinks.json');
    expect(links).toMatch(/statSync\(target\)/);
    expect(deps.steps.findIndex((i) => i.args === links)).toBeGreaterThan(deps.steps.findIndex((i) => /npm ci\b/.test(i.args)));
    expect(deps.steps.some((i) => i.op === 'USER')).toBe(false);
  });

  it("runs Debian's ffmpeg and ffprobe (executable by every user), named by FFMPEG_PATH/FFPROBE_PATH, without the npm packages' binaries", () => {
    // The npm packages' binaries are root's 0644 after --ignore-scripts: text-to-speech answered 502 (EACCES).
    expect(runs(runtime).some((r) => /apt-get install\b.*--no-install-recommends.*\bffmpeg\b/.test(r))).toBe(true);
    const env = runtime.steps.filter((i) => i.op === 'ENV').map((i) => i.args).join(' ');
    expect(env).toMatch(/\bFFMPEG_PATH=\/usr\/bin\/ffmpeg\b/);
    expect(env).toMatch(/\bFFPROBE_PATH=\/usr\/bin\/ffprobe\b/);
    expect(runs(deps).some((r) => /rm -rf .*@ffmpeg-installer\/linux-\*.*@ffprobe-installer\/linux-\*/.test(r))).toBe(true);
  });
});

/** Every credential compose.yaml needs, each distinct, as an operator's .env would give them. */
const REQUIRED: Record<string, string> = {
  POSTGRES_PASSWORD: 'pg-password-from-env',
  MINIO_ROOT_USER: 'minio-root-from-env',
  MINIO_ROOT_PASSWORD: 'minio-root-password-from-env',
  S3_ACCESS_KEY_ID: 'adforge-app-from-env',
  S3_SECRET_ACCESS_KEY: 'adforge-app-secret-from-env',
  FILES_SIGNING_SECRET: 'files-signing-secret-from-env-0123456789',
  METRICS_TOKEN: 'metrics-token-from-env-0123',
};
const CREDENTIAL = /PASSWORD|SECRET|TOKEN|_KEY|ROOT_USER/;

/**
 * What compose makes of the file's text with this environment: ${VAR}, ${VAR:-default} and
 * ${VAR-default}; ${VAR:?message} (unset or empty) and ${VAR?message} (unset) refuse to start
 * with the message; $$ is a literal $.
 */
function interpolate(text: string, env: Record<string, string | undefined>): string {
  return text.replace(/\$\$|\$\{(\w+)(?:(:?)([-?])([^}]*))?\}/g, (m, name: string, colon: string, op: string | undefined, arg: string) => {
    if (m === '$$') return '$';
    const v = env[name];
    const missing = v === undefined || (colon === ':' && v === '');
    if (!op) return v ?? '';
    if (op === '-') return missing ? arg : v!;
    if (missing) throw new Error(`required variable ${name} is missing a value: ${arg}`);
    return v!;
  });
}

describe('compose.yaml', () => {
  const text = read('compose.yaml');
  const composeWith = (env: Record<string, string | undefined>) =>
    parse(interpolate(text, env), { merge: true }) as { services: Record<string, any> };
  const services = composeWith(REQUIRED).services;
  const raw = (parse(text, { merge: true }) as { services: Record<string, any> }).services;
  const ours = Object.entries(services).filter(([, s]) => s.image === 'adforge:local');
  const envOf = (s: any): Record<string, string> => Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));
  const init = Object.entries(services).find(([, s]) => String(s.image).startsWith('minio/mc'));
  const initName = init?.[0] ?? 'a minio/mc init service';

  it('runs PostgreSQL, MinIO, two API nodes and two workers, built from the Dockerfile', () => {
    expect(services.postgres.image).toMatch(/^postgres:/);
    expect(services.minio.image).toMatch(/^minio\/minio/);
    const byCommand = (c: string) => ours.filter(([, s]) => s.command?.[0] === c);
    expect(byCommand('serve')).toHaveLength(2);
    expect(byCommand('worker')).toHaveLength(2);
    expect(byCommand('migrate')).toHaveLength(1);
    for (const [, s] of ours) expect(s.build.context).toBe('.');
  });

  it('names every image through a variable with Docker Hub\'s as its default, for a registry mirror', () => {
    // The Dockerfile's base comes in as its build argument; the other images by name.
    for (const [, s] of ours) expect(s.build.args.NODE_IMAGE).toBe('node:24-bookworm-slim');
    const mirrored = composeWith({ ...REQUIRED, NODE_IMAGE: 'mirror.test/node:24-bookworm-slim', POSTGRES_IMAGE: 'mirror.test/postgres:18', MINIO_IMAGE: 'mirror.test/minio', MC_IMAGE: 'mirror.test/mc' }).services;
    for (const [name, s] of Object.entries(mirrored)) {
      if (s.image === 'adforge:local') expect(s.build.args.NODE_IMAGE, name).toBe('mirror.test/node:24-bookworm-slim');
      else expect(s.image, name).toMatch(/^mirror\.test\//);
    }
  });

  it("every node's command is a CLI command and its settings are the configuration's, valid together", () => {
    for (const [name, s] of ours) {
      expect(COMMANDS.has(s.command[0]), `${name}: ${s.command}`).toBe(true);
      const env = envOf(s);
      for (const k of Object.keys(env)) expect(CONFIG_VARIABLES, `${name}: ${k}`).toContain(k);
      const config = loadConfig(env);
      expect(config.storage).toBe('s3');
      expect(config.databaseUrl).toMatch(/^postgres:\/\/adforge:.*@postgres:5432\/adforge$/);
      expect(config.rateLimitStore).toBe('postgres');
      // A stopped container gets its grace to drain before it is killed.
      expect(parseInt(s.stop_grace_period, 10)).toBeGreaterThan(config.shutdownGraceSeconds);
    }
    // Every node signs file links with the same secret, so a link from one is good on all.
    expect(new Set(ours.map(([, s]) => envOf(s).FILES_SIGNING_SECRET)).size).toBe(1);
  });

  it('publishes each API node on the HTTPS port its configuration listens on; the nodes start after the migrations and the storage setup', () => {
    const port = loadConfig({}).port;
    for (const [name, s] of ours.filter(([, s]) => s.command[0] !== 'migrate')) {
      if (s.command[0] === 'serve') expect(s.ports.some((p: string) => p.endsWith(`:${port}`)), name).toBe(true);
      expect(s.depends_on.migrate.condition).toBe('service_completed_successfully');
      expect(s.depends_on[initName]?.condition, name).toBe('service_completed_successfully');
    }
    for (const [, s] of Object.entries(services)) for (const dep of Object.keys(s.depends_on ?? {})) expect(services[dep]).toBeDefined();
    expect(envOf(services.postgres).POSTGRES_PASSWORD).toBe(new URL(envOf(ours[0]![1]).DATABASE_URL!).password);
  });

  it('gives no credential a default: the stack refuses to start until each is set, saying how', () => {
    for (const literal of ['adforge-local', 'change-me', 'local-secret']) expect(text).not.toContain(literal);
    // Every variable that carries a credential is ${VAR:?message}, the message saying where to set it.
    const refs = [...text.matchAll(/\$\{(\w+)([^}]*)\}/g)].filter(([, name]) => CREDENTIAL.test(name!));
    expect(refs.length).toBeGreaterThan(0);
    for (const [ref, name, rest] of refs) {
      expect(rest, ref).toMatch(/^:\?\s*\S/);
      expect(rest, ref).toMatch(/\.env/);
      expect(Object.keys(REQUIRED), ref).toContain(name);
    }
    expect(new Set(refs.map(([, name]) => name))).toEqual(new Set(Object.keys(REQUIRED)));
    // ... and every credential setting of every service comes from such a variable, never a literal.
    for (const [name, s] of Object.entries(raw)) {
      for (const [k, v] of Object.entries(s.environment ?? {})) {
        if (CREDENTIAL.test(k)) expect(String(v), `${name}: ${k}`).toMatch(/^\$\{\w+:\?[^}]+\}$/);
      }
    }
    expect(String(raw.migrate.environment.DATABASE_URL)).toContain('${POSTGRES_PASSWORD:?');
    // .env.example names each one, with no value to copy.
    const example = read('.env.example');
    for (const name of Object.keys(REQUIRED)) expect(example).toMatch(new RegExp(`^${name}=$`, 'm'));
    // Unset or empty, each one stops compose with its message.
    for (const name of Object.keys(REQUIRED)) {
      for (const value of [undefined, '']) expect(() => composeWith({ ...REQUIRED, [name]: value }), name).toThrow(`required variable ${name}`);
    }
  });

  it('publishes nothing but the API nodes\' HTTPS port on all interfaces: MinIO, its console and the metrics on loopback only', () => {
    const port = loadConfig({}).port;
    const published = (p: any): { host: string | undefined; target: number } => {
      if (typeof p === 'object') return { host: p.host_ip, target: Number(p.target) };
      const parts = String(p).split(':');
      return { host: parts.length === 3 ? parts[0] : undefined, target: Number(parts.at(-1)) };
    };
    for (const [name, s] of Object.entries(services)) {
      for (const p of s.ports ?? []) {
        const { host, target } = published(p);
        if (s.command?.[0] === 'serve' && target === port) continue;
        expect(host, `${name}: ${JSON.stringify(p)}`).toBe('127.0.0.1');
      }
    }
    // The console listens where the command says, and that port is not on the public interface.
    const consolePort = Number(/--console-address\s+\S*:(\d+)/.exec(services.minio.command.join(' '))?.[1]);
    expect(consolePort).toBeGreaterThan(0);
    for (const p of services.minio.ports ?? []) if (published(p).target === consolePort) expect(published(p).host).toBe('127.0.0.1');
  });

  it('the nodes use their own MinIO user, limited by a policy to the bucket, made by a one-shot init service', () => {
    const app = envOf(ours[0]![1]);
    const minio = envOf(services.minio);
    expect(app.S3_ACCESS_KEY_ID).not.toBe(minio.MINIO_ROOT_USER);
    expect(app.S3_SECRET_ACCESS_KEY).not.toBe(minio.MINIO_ROOT_PASSWORD);
    expect(String(raw[ours[0]![0]].environment.S3_ACCESS_KEY_ID)).not.toContain('MINIO_ROOT');
    expect(init, 'an init service on minio/mc').toBeDefined();
    const [, svc] = init!;
    expect(svc.restart).toBe('no');
    expect(svc.depends_on.minio.condition).toBe('service_healthy');
    const script = [svc.entrypoint, svc.command].flat().join(' ');
    const bucket = app.S3_BUCKET!;
    expect(script).toContain(`mc mb --ignore-existing local/${bucket}`);
    // The user is the nodes' key, its policy attached to it alone.
    const user = /mc admin user add local "\$(\w+)" "\$(\w+)"/.exec(script);
    expect(user, script).not.toBeNull();
    expect(envOf(svc)[user![1]!]).toBe(app.S3_ACCESS_KEY_ID);
    expect(envOf(svc)[user![2]!]).toBe(app.S3_SECRET_ACCESS_KEY);
    const created = /mc admin policy create local (\S+) (\S+)/.exec(script);
    expect(created, script).not.toBeNull();
    const [, policyName, policyPath] = created!;
    expect(script).toMatch(new RegExp(`mc admin policy attach local ${policyName} --user "\\$${user![1]}"`));
    // The policy file, mounted read-only from the repository: this bucket's objects and nothing else.
    const mount = (svc.volumes as string[]).find((v) => v.split(':')[1] === policyPath);
    expect(mount, `${policyPath} mounted`).toMatch(/:ro$/);
    const policy = JSON.parse(read(mount!.split(':')[0]!)) as { Statement: Array<{ Effect: string; Action: string[]; Resource: string[] }> };
    const allowed = new Set(['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:ListBucket', 's3:GetBucketLocation']);
    expect(policy.Statement.length).toBeGreaterThan(0);
    for (const st of policy.Statement) {
      expect(st.Effect).toBe('Allow');
      for (const a of [st.Action].flat()) expect(allowed, a).toContain(a);
      for (const r of [st.Resource].flat()) expect([`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`]).toContain(r);
    }
    const actions = policy.Statement.flatMap((st) => [st.Action].flat());
    for (const a of ['s3:GetObject', 's3:PutObject', 's3:DeleteObject']) expect(actions).toContain(a);
  });
});
