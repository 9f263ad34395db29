// `npm run bench:subscriptions`: the delay from a generation's status change (the commit of the
// transaction that ends it, as a worker does) to the GraphQL subscription event reaching a
// graphql-ws client over TLS, through Postgres LISTEN/NOTIFY. Median and p99 over N events.
// Knobs: BENCH_EVENTS (100).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { startHttpServer } from '../src/http/server.ts';
import { loadTls } from '../src/http/tls.ts';
import { createLogger } from '../src/log.ts';
import { freePort } from '../src/net/ports.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100);
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-bench-subs-'));
await fs.chmod(dir, 0o755);
const pgHandle = await startEmbeddedPostgres({ dir: path.join(dir, 'pg') });
const port = await freePort();
const config = loadConfig({
  DATABASE_URL: pgHandle.url('postgres'),
  DATA_DIR: path.join(dir, 'data'),
  HOST: '127.0.0.1',
  PORT: String(port),
  LOG_LEVEL: 'silent',
});
const app = await buildApp(config, createLogger('silent'));
const http = await startHttpServer(app);
const tls = await loadTls(config);
const team = await app.services.teams.createTeam({ name: 'bench', tier: 'pro', credits_limit: 1_000_000 });
const key = await app.services.teams.createKey(team.id);
const principal = { teamId: team.id, keyId: key.id };

class TrustingWebSocket extends WebSocket {
  constructor(address: string, protocols?: string | string[]) {
    super(address, protocols, { ca: tls.cert });
  }
}
const client = createClient({
  url: `wss://127.0.0.1:${http.port}/graphql`,
  webSocketImpl: TrustingWebSocket,
  connectionParams: { authorization: `Bearer ${key.key}` },
});

const waiting = new Map<string, (t: number) => void>();
const unsubscribe = client.subscribe<{ generationsUpdated: { id: string; status: string } }>(
  { query: 'subscription { generationsUpdated { id status } }' },
  {
    next: (m) => {
      const g = m.data?.generationsUpdated;
      if (g && g.status !== 'processing') waiting.get(g.id)?.(performance.now());
    },
    error: (e) => console.error('subscription error', e),
    complete: () => {},
  },
);
await new Promise((r) => setTimeout(r, 500));

const delays: number[] = [];
try {
  for (let i = 0; i < EVENTS + 5; i++) {
    const created = await app.services.generationCreator.create(principal, 'text-to-image', { model: 'fast', prompt: `bench ${i}`, aspect_ratio: '1:1' });
    const id = (created.body as { generation_id: string }).generation_id;
    const arrived = new Promise<number>((resolve, reject) => {
      waiting.set(id, resolve);
      setTimeout(() => reject(new Error(`no event for ${id} within 10 s`)), 10_000).unref();
    });
    const t0 = performance.now();
    await app.services.lifecycle.complete(id, [`generations/${team.id}/${id}/1.png`], {});
    const t1 = await arrived;
    waiting.delete(id);
    if (i >= 5) delays.push(t1 - t0); // the first few warm connections and caches
  }
} finally {
  unsubscribe();
  await client.dispose();
  await http.close();
  await app.close();
  await pgHandle.stop();
  await fs.rm(dir, { recursive: true, force: true });
}

delays.sort((a, b) => a - b);
const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]!;
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`);
console.log(`status change -> subscription event over graphql-ws (${delays.length} events): median ${at(0.5).toFixed(2)} ms, p99 ${at(0.99).toFixed(2)} ms, max ${delays.at(-1)!.toFixed(2)} ms`);
