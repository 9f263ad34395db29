import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

// A provider result that will never do is refused from what arrives first, stored nowhere, and not asked for again.
const FAL_KEY = 'fal-limits-test-key';
const MB = 1024 * 1024;
let result = { size: 0, open: () => Readable.from([]) };
let fal: FalFake;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  fal = await startFalFake({ key: FAL_KEY, video: { get size() { return result.size; }, open: () => result.open() }, pollsUntilDone: 1 });
  svc = await startTestService({ FAL_KEY, FAL_QUEUE_URL: fal.url, ENGINE_ROUTES: 'veo-3.1=fal,*=local', UPSTREAM_POLL_MS: '100', UPSTREAM_MAX_RESULT_MB: '1' }, { worker: true });
  t = await svc.team({ credits: 1000 });
});
afterAll(async () => {
  await svc?.close();
  await fal?.close();
});

const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const storedFiles = async (id: string) => fs.readdir(path.join(svc.dataDir, 'files', 'generations', t.teamId, id)).catch(() => [] as string[]);

async function run(prompt: string) {
  const before = await used();
  const res = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { model: 'veo-3.1', prompt, aspect_ratio: '16:9', duration: 4 } });
  const g = await waitForGeneration(svc, t.key, res.body.generation_id as string);
  const sent = fal.submits.find((s) => s.input.prompt === prompt)!;
  return { g, downloads: fal.requests.get(sent.requestId)!.downloads, refunded: (await used()) === before, files: await storedFiles(g.id) };
}

describe('a provider result that will never do', () => {
  it('past UPSTREAM_MAX_RESULT_MB: failed and refunded after one download, nothing stored', async () => {
    const mp4Head = Buffer.from('00000018667479706973736f6d0000020069736f6d6d703431', 'hex');
    result = { size: 2 * MB, open: () => Readable.from([mp4Head, Buffer.alloc(2 * MB - mp4Head.length)]) };
    const r = await run('a result too large');
    expect(r.g).toMatchObject({ status: 'failed', error: 'the provider result is too large' });
    expect(r).toMatchObject({ downloads: 1, refunded: true, files: [] });
  });

  it('not a video by its first bytes: failed and refunded after one download, nothing stored', async () => {
    const page = Buffer.from('<!doctype html><p>not a video</p>'.padEnd(MB / 2, ' '));
    result = { size: page.length, open: () => Readable.from([page]) };
    const r = await run('a result that is a web page');
    expect(r.g).toMatchObject({ status: 'failed', error: "the provider's result is not a video" });
    expect(r).toMatchObject({ downloads: 1, refunded: true, files: [] });
  });
});
