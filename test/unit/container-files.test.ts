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

/** Dockerfile instructions by stage: comments dropped, continuation lines joined. */
function dockerStages(text: string): Stage[] {
  const lines = text.split('\n').filter((l) => !/^\s*#/.test(l));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const line of joined.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const [, op, args] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (!op) throw new Error(`not an instruction: ${line}`);
    if (op.toUpperCase() === 'FROM') {
      const [, from, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args!)!;
      stages.push({ from: from!, name, steps: [] });
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

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, any> };
  const services = compose.services;
  const ours = Object.entries(services).filter(([, s]) => s.image === 'adforge:local');
  /** What compose makes of ${VAR:-default} with VAR unset, and of $$. */
  const interpolate = (v: unknown) => String(v).replace(/\$\{(\w+):-([^}]*)\}/g, (_m, _k, d: string) => d).replace(/\$\$/g, '$');
  const envOf = (s: any): Record<string, string> => Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(v)]));

  it('runs PostgreSQL, MinIO, two API nodes and two workers, built from the Dockerfile', () => {
    expect(services.postgres.image).toMatch(/^postgres:/);
    expect(services.minio.image).toMatch(/^minio\/minio/);
    const byCommand = (c: string) => ours.filter(([, s]) => s.command?.[0] === c);
    expect(byCommand('serve')).toHaveLength(2);
    expect(byCommand('worker')).toHaveLength(2);
    expect(byCommand('migrate')).toHaveLength(1);
    for (const [, s] of ours) expect(s.build).toBe('.');
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

  it('publishes each API node on the HTTPS port its configuration listens on; the nodes start after the migrations and the bucket', () => {
    const port = loadConfig({}).port;
    for (const [name, s] of ours.filter(([, s]) => s.command[0] === 'serve')) {
      expect(s.ports.some((p: string) => p.endsWith(`:${port}`)), name).toBe(true);
      expect(s.depends_on.migrate.condition).toBe('service_completed_successfully');
      expect(s.depends_on.bucket.condition).toBe('service_completed_successfully');
    }
    for (const [, s] of Object.entries(services)) for (const dep of Object.keys(s.depends_on ?? {})) expect(services[dep]).toBeDefined();
    expect(envOf(services.minio).MINIO_ROOT_USER).toBe(envOf(ours[0]![1]).S3_ACCESS_KEY_ID);
    expect(services.bucket.command.join(' ')).toContain(`local/${envOf(ours[0]![1]).S3_BUCKET}`);
    expect(envOf(services.postgres).POSTGRES_PASSWORD).toBe(new URL(envOf(ours[0]![1]).DATABASE_URL!).password);
  });
});
