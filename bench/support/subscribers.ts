// A child process holding N graphql-ws subscriptions (one WebSocket each) to `generationsUpdated`,
// so that the server's memory per subscription is measured without the clients'. It records when
// each event reaches each subscription (wall clock, ms) and reports over IPC:
//   -> { ready: n }                    every socket acknowledged and subscribed
//   <- { collect: id, expect: n }      -> { arrivals: id, times: number[] } once n have the event (or 10 s)
import { performance } from 'node:perf_hooks';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

const { url, cert, key, count } = JSON.parse(process.argv[2]!) as { url: string; cert: string; key: string; count: number };
const now = () => performance.timeOrigin + performance.now();

class TrustingWebSocket extends WebSocket {
  constructor(address: string, protocols?: string | string[]) {
    super(address, protocols, { ca: cert });
  }
}

const arrivals = new Map<string, number[]>();
const waiting = new Map<string, { expect: number; done: () => void }>();
const clients: Client[] = [];

function arrived(id: string): void {
  const times = arrivals.get(id) ?? [];
  times.push(now());
  arrivals.set(id, times);
  const w = waiting.get(id);
  if (w && times.length >= w.expect) w.done();
}

let acked = 0;
for (let i = 0; i < count; i++) {
  const client = createClient({
    url,
    webSocketImpl: TrustingWebSocket,
    connectionParams: { authorization: `Bearer ${key}` },
    lazy: false,
    retryAttempts: 0,
    on: { connected: () => void acked++ },
  });
  clients.push(client);
  client.subscribe<{ generationsUpdated: { id: string; status: string } }>(
    { query: 'subscription { generationsUpdated { id status } }' },
    { next: (m) => m.data && m.data.generationsUpdated.status !== 'processing' && arrived(m.data.generationsUpdated.id), error: (e) => console.error('subscription error', e), complete: () => {} },
  );
  // Open the sockets a few at a time: a thousand TLS handshakes at once only measure the handshake.
  if (i % 50 === 49) await new Promise((r) => setTimeout(r, 20));
}
while (acked < count) await new Promise((r) => setTimeout(r, 20));
process.send!({ ready: acked });

process.on('message', (m: { collect?: string; expect?: number; stop?: boolean }) => {
  if (m.stop) {
    void Promise.all(clients.map((c) => c.dispose())).finally(() => process.exit(0));
    return;
  }
  const id = m.collect!;
  const send = () => {
    waiting.delete(id);
    process.send!({ arrivals: id, times: arrivals.get(id) ?? [] });
    arrivals.delete(id);
  };
  if ((arrivals.get(id)?.length ?? 0) >= m.expect!) return send();
  const timer = setTimeout(send, 10_000);
  waiting.set(id, { expect: m.expect!, done: () => (clearTimeout(timer), send()) });
});
