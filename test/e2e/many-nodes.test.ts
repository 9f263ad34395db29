import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe, spawnWorker, startTestService, UNLIMITED_RATE, type ServeNode, type TestService } from '../support/app.ts';
import { waitUntil, type LongRunning } from '../support/cli-run.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { startS3Server } from '../support/s3-server.ts';

// docs/running-at-scale.md: `adforge serve` and `adforge worker` as separate processes on one
// PostgreSQL and one S3-compatible bucket. Two API nodes and two workers here, plus the test's own
// in-process service (a third node, used to read and to revoke).

const BUCKET = 'adforge-nodes';
// Pro keys get a small bucket here so that the limit across nodes shows; every other tier is unlimited.
const RATES = UNLIMITED_RATE.replace(/pro=\d+:\d+/, 'pro=60:10');

let s3: Awaited<ReturnType<typeof startS3Server>>;
let svc: TestService;
const nodes: ServeNode[] = [];
const workers: LongRunning[] = [];

beforeAll(async () => {
  s3 = await startS3Server(BUCKET);
  const env = {
    STORAGE: 's3',
    S3_BUCKET: BUCKET,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
    RATE_LIMIT_TIERS: RATES,
  };
  svc = await startTestService(env);
  nodes.push(...(await Promise.all([spawnServe(svc, env), spawnServe(svc, env)])));
  for (let i = 0; i < 2; i++) workers.push(spawnWorker(svc, { ...env, LOCAL_ENGINE_DELAY_MS: '300' }));
}, 60_000);

afterAll(async () => {
  for (const p of [...nodes, ...workers]) if (p.running()) p.child.kill('SIGTERM');
  await Promise.all([...nodes, ...workers].map((p) => p.waitForExit(15_000)));
  await Promise.all(nodes.map((n) => n.dispatcher.close()));
  await svc?.close();
  await s3?.close();
}, 30_000);

async function finished(node: ServeNode, key: string, id: string): Promise<any> {
  let body: any;
  await waitUntil(
    async () => {
      body = (await node.api('GET', `/api/v1/generations/${id}`, { key })).body;
      return body.status !== 'processing';
    },
    30_000,
    `generation ${id} to finish`,
  );
  return body;
}

describe('two API nodes and two workers on one database and one bucket', () => {
  it('creates on either node are made by the workers, read from the other node, their files in the bucket, charged once', async () => {
    const t = await svc.team({ credits: 100 });
    const ids: string[] = [];
    for (const [i, node] of [nodes[0]!, nodes[1]!, nodes[0]!, nodes[1]!].entries()) {
      const res = await node.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: `node ${i}`, aspect_ratio: '1:1' } });
      expect(res.status).toBe(202);
      ids.push(res.body.generation_id);
    }
    for (const [i, id] of ids.entries()) {
      const done = await finished(nodes[(i + 1) % 2]!, t.key, id);
      expect(done.status).toBe('completed');
      expect(new URL(done.result_url).pathname).toMatch(new RegExp(`^/${BUCKET}/`));
      expect((await fetch(done.result_url)).status).toBe(200);
    }
    const team = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    const debits = await svc.app.db.selectFrom('credit_ledger').select('subject_id').where('team_id', '=', t.teamId).where('kind', '=', 'debit').execute();
    expect(debits.map((d) => d.subject_id).sort()).toEqual([...ids].sort());
    expect(team.credits_used).toBe(ids.length);
  }, 60_000);

  it('a subscription on one node sees the status a worker process set, for a generation created on the other node', async () => {
    const t = await svc.team();
    const client = await graphqlClient({ baseUrl: nodes[0]!.baseUrl, app: { config: svc.app.config } });
    const ws = client.ws(t.key);
    const seen: string[] = [];
    try {
      const ended = new Promise<void>((resolve, reject) => {
        ws.subscribe(
          { query: 'subscription { generationsUpdated { id status } }' },
          {
            next: (m: any) => {
              if (m.errors) return reject(new Error(JSON.stringify(m.errors)));
              seen.push(m.data.generationsUpdated.status);
              if (m.data.generationsUpdated.status === 'completed') resolve();
            },
            error: reject,
            complete: () => resolve(),
          },
        );
      });
      // The subscription is live once the server acknowledged it: one round trip later.
      await new Promise((r) => setTimeout(r, 500));
      const res = await nodes[1]!.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'seen elsewhere', aspect_ratio: '1:1' } });
      expect(res.status).toBe(202);
      await Promise.race([ended, new Promise((_, reject) => setTimeout(() => reject(new Error(`no completion: ${seen.join(',')}`)), 30_000))]);
    } finally {
      await ws.dispose();
      await client.close();
    }
    expect(seen.at(-1)).toBe('completed');
  }, 60_000);

  it('a key revoked on one node stops working on every node within a second', async () => {
    const t = await svc.team();
    for (const node of nodes) expect((await node.api('GET', '/api/v1/products', { key: t.key })).status).toBe(200);
    const revokedAt = Date.now();
    await svc.app.services.teams.revokeKey(t.keyId);
    await Promise.all(
      nodes.map((node) => waitUntil(async () => (await node.api('GET', '/api/v1/products', { key: t.key })).status === 401, 1_000, `node ${node.port} to refuse the key`)),
    );
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
  });

  it("a key's rate limit holds across the nodes: one bucket, however the requests are spread", async () => {
    const t = await svc.team({ tier: 'pro' });
    // Burst 10, a token a second: 16 reads sent at once, half to each node, can pass 10 times (11 if
    // a second passes). A bucket per node would have let all 16 through.
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => nodes[i % 2]!.api('GET', '/api/v1/products', { key: t.key })));
    const passed = answers.filter((a) => a.status === 200).length;
    expect(passed).toBeGreaterThanOrEqual(10);
    expect(passed).toBeLessThanOrEqual(11);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBe(16 - passed);
    expect(refused.every((a) => Number(a.headers['retry-after']) >= 1)).toBe(true);
  });
});
