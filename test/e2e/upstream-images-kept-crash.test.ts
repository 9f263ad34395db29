import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngBytes } from '../support/image-host.ts';
import { startGeminiFake } from '../support/gemini-fake.ts';
import { spawnWorker, startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import type { LongRunning } from '../support/cli-run.ts';

/*
 * A worker killed while Gemini makes image 3 of 4 (the call sent, its answer not yet recorded):
 * the two images already made are kept. The worker that takes the generation over cannot know
 * whether image 3 was made (Gemini has no idempotency key), so it does not ask again: the
 * generation completes with the two, and the share of the two not delivered is refunded.
 */
const KEY = 'AIza-kept-crash-9e0';
let gemini: Awaited<ReturnType<typeof startGeminiFake>>;
let svc: TestService;
let env: Record<string, string>;
const workers: LongRunning[] = [];

beforeAll(async () => {
  gemini = await startGeminiFake({ key: KEY, video: Buffer.from('mp4'), png: await pngBytes(10, 10, '#118844') });
  env = { GEMINI_API_KEY: KEY, GEMINI_API_URL: gemini.url, ENGINE_ROUTES: 'pro=gemini,*=local', UPSTREAM_POLL_MS: '40' };
  svc = await startTestService(env);
});
afterAll(async () => {
  for (const w of workers) if (w.running()) w.child.kill('SIGKILL');
  await svc?.close();
  await gemini?.close();
});

const worker = () => {
  const w = spawnWorker(svc, env);
  workers.push(w);
  return w;
};

describe('a worker killed during image 3 of 4', () => {
  it('the next worker completes with the two images made, never asks for image 3 again, and refunds the share of the two not delivered', async () => {
    const t = await svc.team({ credits: 1000 });
    const prompt = 'killed at 3';
    gemini.failNext('generate-content', { hang: true }, 2);
    const first = worker();
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'pro', prompt, aspect_ratio: '1:1', quantity: 4 } });
    const id = res.body.generation_id as string;
    const calls = () => gemini.imageCalls.filter((c) => c.body.contents[0].parts[0].text === prompt).length;
    for (let i = 0; i < 400 && calls() < 3; i++) await new Promise((r) => setTimeout(r, 50));
    expect(calls()).toBe(3);
    first.child.kill('SIGKILL');
    await first.exited;

    worker();
    const g = await waitForGeneration(svc, t.key, id, 60_000);
    expect(g.status).toBe('completed');
    expect(g.result_urls).toHaveLength(2);
    expect(calls()).toBe(3);
    const ledger = await svc.app.db.selectFrom('credit_ledger').select(['kind', 'amount', 'note']).where('subject_id', '=', id).orderBy('id').execute();
    expect(ledger).toEqual([
      { kind: 'debit', amount: 8, note: null },
      { kind: 'refund', amount: -4, note: '2 of 4 images made; the 2 not made are refunded' },
    ]);
    const team = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(team.credits_used).toBe(4);
    const detail = await svc.api('GET', `/api/v1/generations/${id}`, { key: t.key });
    expect(detail.body.credits).toBe(4);
    expect(detail.body.details).toMatchObject({ quantity: 4, quantity_made: 2 });
    for (const url of g.result_urls) expect((await svc.fetchUrl(url)).status).toBe(200);
  }, 120_000);
});
