import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { startHttpServer, type HttpServer } from '../../src/http/server.ts';
import { loadTls } from '../../src/http/tls.ts';
import { createLogger } from '../../src/log.ts';
import { freePort } from '../../src/db/ports.ts';

export interface BenchService {
  app: App;
  http: HttpServer;
  /** The self-signed certificate the server presents, for clients to trust. */
  cert: string;
  dir: string;
  /** A Pro team with a hundred million credits and its key. */
  team: { id: string; key: string; keyId: string };
  stop: () => Promise<void>;
}

/**
 * The whole service for a benchmark: embedded PostgreSQL in a fresh temp directory (0755: as root
 * the cluster runs as `postgres`), the app built in-process, HTTPS on a free port of 127.0.0.1,
 * silent logs. `stop` undoes all of it, whatever failed. `env` adds to (or overrides) the settings.
 */
export async function startBenchService(name: string, env: Record<string, string> = {}): Promise<BenchService> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `adforge-bench-${name}-`));
  await fs.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: path.join(dir, 'pg') });
  const stops: Array<() => Promise<unknown>> = [() => fs.rm(dir, { recursive: true, force: true }), () => pg.stop()];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((e: unknown) => console.error('bench cleanup:', e));
  };
  try {
    const port = await freePort();
    const config = loadConfig({ DATABASE_URL: pg.url('postgres'), DATA_DIR: path.join(dir, 'data'), HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'silent', RATE_LIMIT_TIERS: 'pro=1000000:1000000', ...env });
    const app = await buildApp(config, createLogger('silent'));
    stops.push(() => app.close());
    const http = await startHttpServer(app);
    stops.push(() => http.close());
    const t = await app.services.teams.createTeam({ name: 'bench', tier: 'pro', credits_limit: 100_000_000 });
    const key = await app.services.teams.createKey(t.id);
    return { app, http, cert: (await loadTls(config)).cert, dir, team: { id: t.id, key: key.key, keyId: key.id }, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
