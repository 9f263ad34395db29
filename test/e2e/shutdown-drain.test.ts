import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe, spawnWorker, startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { waitUntil, type LongRunning } from '../support/cli-run.ts';
import { pngBytes, startImageHost } from '../support/image-host.ts';

// SIGTERM drains (docs/configuration.md, SHUTDOWN_GRACE_SECONDS; docs/operations.md): an API node stops taking
// connections while the requests it holds finish; a worker finishes or releases its jobs; both exit 0.

let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
const children: LongRunning[] = [];

beforeAll(async () => {
  svc = await startTestService();
  const png = await pngBytes();
  host = await startImageHost({
    // An upstream image host slow enough that the product create is still open when SIGTERM arrives.
    '/slow.png': (_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png), 1500);
    },
  });
});
afterAll(async () => {
  for (const c of children) if (c.running()) c.child.kill('SIGKILL');
  await host?.close();
  await svc?.close();
});

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function job(generationId: string) {
  const r = await sql<{ locked_by: string | null; attempts: number; last_error: string | null }>`
    select locked_by, attempts, last_error from graphile_worker._private_jobs where key = ${`generation:${generationId}`}`.execute(svc.app.db);
  return r.rows[0];
}

// graphile-worker's debug log says when a job's task begins (locked alone can mean fetched, not started).
const running = (worker: LongRunning) => worker.waitForStdout(/Found task \d+ \(run_generation\)/, 20_000);

async function debits(generationId: string) {
  return svc.app.db.selectFrom('credit_ledger').select(['kind', 'amount']).where('subject_id', '=', generationId).execute();
}

describe('SIGTERM on an API node', () => {
  it('closes the listener at once, lets the request it holds finish, and exits 0', async () => {
    const node = await spawnServe(svc, { SHUTDOWN_GRACE_SECONDS: '15' });
    children.push(node);
    const t = await svc.team();
    const open = node.api('POST', '/api/v1/products', { key: t.key, body: { name: 'Drained', description: 'Sold while the node drains', category: 'test', image_url: host.url('/slow.png') } });
    await waitUntil(() => host.hits.includes('/slow.png'), 10_000, 'the create to fetch its image');
    node.child.kill('SIGTERM');
    await waitUntil(async () => !(await accepts(node.port)), 1_000, 'the listener to refuse new connections');

    const res = await open;
    expect(res.status).toBe(201);
    expect(res.headers.connection).toBe('close');
    expect(await node.waitForExit(10_000)).toEqual({ code: 0, signal: null });
    const rows = await svc.app.db.selectFrom('products').select('name').where('team_id', '=', t.teamId).execute();
    expect(rows).toEqual([{ name: 'Drained' }]);
    await node.dispatcher.close();
  }, 60_000);
});

describe('SIGTERM on a worker', () => {
  it('lets a running job finish within the grace, then exits 0', async () => {
    const t = await svc.team({ credits: 100 });
    const worker = spawnWorker(svc, { LOCAL_ENGINE_DELAY_MS: '1500', SHUTDOWN_GRACE_SECONDS: '20', LOG_LEVEL: 'debug' });
    children.push(worker);
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'drain me', aspect_ratio: '1:1' } });
    expect(res.status).toBe(202);
    const id = res.body.generation_id as string;
    await running(worker);
    worker.child.kill('SIGTERM');
    expect(await worker.waitForExit(20_000)).toEqual({ code: 0, signal: null });
    const g = await svc.app.db.selectFrom('generations').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    expect(g.status).toBe('completed');
    expect(await debits(id)).toHaveLength(1);
  }, 60_000);

  it('stops a job that outlasts the grace and releases it without using an attempt; another worker finishes it, charged once', async () => {
    const t = await svc.team({ credits: 100 });
    const first = spawnWorker(svc, { LOCAL_ENGINE_DELAY_MS: '60000', SHUTDOWN_GRACE_SECONDS: '2', LOG_LEVEL: 'debug' });
    children.push(first);
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'released', aspect_ratio: '1:1' } });
    const id = res.body.generation_id as string;
    await running(first);
    expect((await job(id))!.attempts).toBe(1);
    const signalled = Date.now();
    first.child.kill('SIGTERM');
    expect(await first.waitForExit(10_000)).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(6_000);

    const released = await job(id);
    expect(released).toMatchObject({ locked_by: null, attempts: 0 });
    expect(released!.last_error).toMatch(/shut down/);
    const still = await svc.app.db.selectFrom('generations').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    expect(still.status).toBe('processing');

    const second = spawnWorker(svc, { LOCAL_ENGINE_DELAY_MS: '0' });
    children.push(second);
    const done = await waitForGeneration(svc, t.key, id, 30_000);
    expect(done.status).toBe('completed');
    expect(await debits(id)).toEqual([{ kind: 'debit', amount: expect.any(Number) }]);
    second.child.kill('SIGTERM');
    expect((await second.waitForExit(10_000))?.code).toBe(0);
  }, 90_000);
});
