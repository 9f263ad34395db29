// `npm run bench:subscriptions`: the delay from a generation's status change (the commit of the
// transaction that ends it, as a worker does) to the GraphQL subscription event reaching a
// graphql-ws client over TLS, through Postgres LISTEN/NOTIFY. Median and p99 over N events.
// Knobs: BENCH_EVENTS (100).
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startBenchService } from './support/service.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100);
const svc = await startBenchService('subs');
const { app, http } = svc;
const team = { id: svc.team.id };
const key = { key: svc.team.key };
const principal = { teamId: svc.team.id, keyId: svc.team.keyId };

class TrustingWebSocket extends WebSocket {
  constructor(address: string, protocols?: string | string[]) {
    super(address, protocols, { ca: svc.cert });
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
  await svc.stop();
}

delays.sort((a, b) => a - b);
const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]!;
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`);
console.log(`status change -> subscription event over graphql-ws (${delays.length} events): median ${at(0.5).toFixed(2)} ms, p99 ${at(0.99).toFixed(2)} ms, max ${delays.at(-1)!.toFixed(2)} ms`);
