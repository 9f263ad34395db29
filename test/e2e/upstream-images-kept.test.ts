import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngBytes } from '../support/image-host.ts';
import { startGeminiFake } from '../support/gemini-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import type { Fault } from '../support/fake-faults.ts';

/*
 * Gemini makes one image per call: quantity 4 is four calls in a row, each billed by Google once
 * it made its image. When call k fails, the k-1 images already made are kept: a failure that made
 * nothing (a 503, Google's own deadline) is followed by an attempt that makes only the rest; one
 * whose outcome is unknown, or a refusal, ends the generation with the k-1 images, the unmade share
 * refunded exactly. Checked for every k of 4 and each kind of failure: Google never makes more
 * images than asked, the user pays for exactly the images delivered, the ledger adds up, and no
 * stored file is left that no row names.
 */
const KEY = 'AIza-kept-images-4a1';
const PER_IMAGE = 2; // pro at 1k
let gemini: Awaited<ReturnType<typeof startGeminiFake>>;
let png: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  png = await pngBytes(12, 12, '#cc8800');
  gemini = await startGeminiFake({ key: KEY, video: Buffer.from('mp4'), png });
  svc = await startTestService(
    { GEMINI_API_KEY: KEY, GEMINI_API_URL: gemini.url, ENGINE_ROUTES: 'pro=gemini,fast=gemini|local,*=local', UPSTREAM_POLL_MS: '40', GEMINI_IMAGE_TIMEOUT_SECONDS: '2' },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await gemini?.close();
});

async function fourImages(prompt: string, failAt: number, fault: Fault, model = 'pro') {
  gemini.failNext('generate-content', fault, failAt - 1);
  const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model, prompt, aspect_ratio: '1:1', quantity: 4 } });
  expect(res.status).toBe(202);
  return waitForGeneration(svc, t.key, res.body.generation_id, 30_000);
}

const calls = (prompt: string) => gemini.imageCalls.filter((c) => c.body.contents[0].parts[0].text === prompt).length;
const billed = (prompt: string) => gemini.billedImages.filter((b) => b.prompt === prompt).length;
const ledger = (id: string) => svc.app.db.selectFrom('credit_ledger').select(['kind', 'amount']).where('subject_id', '=', id).orderBy('id').execute();
const creditsUsed = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const keptRows = (id: string) => svc.app.db.selectFrom('kept_outputs').select('key').where('generation_id', '=', id).execute();

/** The files stored under the generation (local storage), each of which must be one of its results. */
async function storedFiles(g: { id: string }): Promise<string[]> {
  const local = svc.app.storage as typeof svc.app.storage & { pathOf: (key: string) => string };
  const dir = path.dirname(local.pathOf(`generations/${t.teamId}/${g.id}/1.png`));
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => !n.startsWith('.')).map((n) => `generations/${t.teamId}/${g.id}/${n}`);
}

async function expectHolds(g: { id: string; status: string; result_urls: string[]; credits?: number }, delivered: number, prompt: string) {
  const row = await svc.app.db.selectFrom('generations').select(['status', 'result_keys', 'credits']).where('id', '=', g.id).executeTakeFirstOrThrow();
  // Google made no more images than asked, and every one it made is delivered (none lost, none twice).
  expect(billed(prompt)).toBe(delivered);
  expect(g.result_urls).toHaveLength(delivered);
  // The user pays for the images delivered, exactly, and the ledger says so.
  const lines = await ledger(g.id);
  expect(lines.reduce((n, l) => n + l.amount, 0)).toBe(delivered * PER_IMAGE);
  expect(lines[0]).toEqual({ kind: 'debit', amount: 4 * PER_IMAGE });
  if (row.status === 'completed') expect(row.credits).toBe(delivered * PER_IMAGE);
  // Every stored file is named by the generation's results; nothing is left kept.
  expect((await storedFiles(g)).sort()).toEqual([...row.result_keys].sort());
  expect(await keptRows(g.id)).toEqual([]);
  for (const url of g.result_urls) expect((await svc.fetchUrl(url)).status).toBe(200);
}

describe('quantity 4 on Gemini, call k fails', () => {
  for (const k of [1, 2, 3, 4]) {
    it(`k=${k}, a 503 (Google made nothing): the next attempt makes only the ${4 - k + 1} missing; four images, paid once each`, async () => {
      const prompt = `overloaded at ${k}`;
      const g = await fourImages(prompt, k, { status: 503 });
      expect(g.status, g.error).toBe('completed');
      expect(calls(prompt)).toBe(5);
      await expectHolds(g, 4, prompt);
    });

    it(`k=${k}, past Google's deadline (its 504, nothing made): made again from k; four images`, async () => {
      const prompt = `slow at ${k}`;
      const g = await fourImages(prompt, k, { delayMs: 3_000 });
      expect(g.status, g.error).toBe('completed');
      await expectHolds(g, 4, prompt);
    });

    it(`k=${k}, the connection cut after Google made image k (an unknown outcome): never sent again; ${k - 1} images delivered, the rest refunded`, async () => {
      const prompt = `cut at ${k}`;
      const before = await creditsUsed();
      const g = await fourImages(prompt, k, { reset: true });
      expect(calls(prompt)).toBe(k);
      expect(g.status).toBe(k === 1 ? 'failed' : 'completed');
      // Image k was made and billed by Google, and lost on the way: the one image nobody receives.
      expect(billed(prompt)).toBe(k);
      gemini.billedImages.splice(gemini.billedImages.findLastIndex((b) => b.prompt === prompt), 1);
      await expectHolds(g, k - 1, prompt);
      expect(await creditsUsed()).toBe(before + (k - 1) * PER_IMAGE);
    });

    it(`k=${k}, image k refused (IMAGE_SAFETY, no image): ${k - 1} images delivered, the rest refunded`, async () => {
      const prompt = `refused at ${k}`;
      const g = await fourImages(prompt, k, { answer: { candidates: [{ finishReason: 'IMAGE_SAFETY', content: { role: 'model', parts: [] } }] } });
      expect(calls(prompt)).toBe(k);
      expect(g.status).toBe(k === 1 ? 'failed' : 'completed');
      await expectHolds(g, k - 1, prompt);
    });
  }

  it('a 503 at call 3 on a route with a next provider: the local renderer makes only the two missing, after the two Gemini made', async () => {
    const prompt = 'fails over at 3';
    const g = await fourImages(prompt, 3, { status: 503 }, 'fast');
    expect(g.status, g.error).toBe('completed');
    expect(g.result_urls).toHaveLength(4);
    expect(billed(prompt)).toBe(2);
    const made = await Promise.all(g.result_urls.map(async (u: string) => (await svc.fetchUrl(u)).bytes.equals(png)));
    expect(made).toEqual([true, true, false, false]);
  });

  it('a generation past its deadline while image 3 is being made: the sweep completes it with the two made and refunds the rest', async () => {
    const prompt = 'deadline at 3';
    gemini.failNext('generate-content', { hang: true }, 2);
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'pro', prompt, aspect_ratio: '1:1', quantity: 4 } });
    const id = res.body.generation_id as string;
    for (let i = 0; i < 100 && calls(prompt) < 3; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await keptRows(id)).length).toBe(2);
    await svc.app.db.updateTable('generations').set({ deadline_at: new Date(Date.now() - 1_000) }).where('id', '=', id).execute();
    expect(await svc.app.jobs.maintenance.sweepOverdueGenerations()).toContain(id);
    const g = await waitForGeneration(svc, t.key, id);
    expect(g.status).toBe('completed');
    // Image 3 was made by Google and never answered: it is the one nobody receives.
    gemini.billedImages.splice(gemini.billedImages.findLastIndex((b) => b.prompt === prompt), 1);
    await expectHolds(g, 2, prompt);
  });

  it('a generation cancelled while image 3 is being made: its two kept images are deleted, everything is refunded', async () => {
    const prompt = 'cancelled at 3';
    const before = await creditsUsed();
    gemini.failNext('generate-content', { hang: true }, 2);
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'pro', prompt, aspect_ratio: '1:1', quantity: 4 } });
    const id = res.body.generation_id as string;
    for (let i = 0; i < 100 && calls(prompt) < 3; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await keptRows(id)).length).toBe(2);
    expect((await svc.api('POST', `/api/v1/generations/${id}/cancel`, { key: t.key })).status).toBe(200);
    const g = await waitForGeneration(svc, t.key, id);
    expect(g.status).toBe('failed');
    expect(await creditsUsed()).toBe(before);
    expect(await keptRows(id)).toEqual([]);
    for (let i = 0; i < 100 && (await storedFiles(g)).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await storedFiles(g)).toEqual([]);
  });
});
