import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { spawnWorker, startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { waitUntil, type LongRunning } from '../support/cli-run.ts';

/*
 * The proof that a provider result is never held whole: a real `adforge worker` process,
 * its V8 heap limited to 200 MB, copies a 300 MB fal result into local storage, and its peak
 * resident memory (VmHWM, the kernel's high-water mark for the process) stays well under the file.
 * A path that buffers holds at least the 300 MB (Buffers live outside the V8 heap, so the heap
 * limit alone would not catch it; the resident peak does).
 */
const FAL_KEY = 'fal-memory-test-key';
const MB = 1024 * 1024;
const RESULT_BYTES = 300 * MB;
// A copy may add the streams' buffers and the garbage the collector has not reached yet (45 to 76 MB
// measured, the most on a busy machine); a path that buffers adds the whole file at least (980 MB measured).
const COPY_GROWTH_LIMIT = RESULT_BYTES / 2;

/** An MP4 by its first bytes (an `ftyp` box, then one `mdat` running to the end of the file), made as it is read. */
function largeVideo(size: number): Readable {
  const ftyp = Buffer.from('00000018667479706973736f6d0000020069736f6d6d703431', 'hex');
  const mdat = Buffer.from('000000006d646174', 'hex');
  const piece = Buffer.alloc(256 * 1024);
  let left = size - ftyp.length - mdat.length;
  return Readable.from(
    (function* () {
      yield Buffer.concat([ftyp, mdat]);
      while (left > 0) {
        const n = Math.min(left, piece.length);
        left -= n;
        yield n === piece.length ? piece : piece.subarray(0, n);
      }
    })(),
    { objectMode: false },
  );
}

/** VmHWM: the process's peak resident memory since it started; VmRSS: resident now. */
async function memory(pid: number, field: 'VmHWM' | 'VmRSS'): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  if (!kb) throw new Error(`no ${field} for ${pid}`);
  return Number(kb[1]) * 1024;
}

let fal: FalFake;
let svc: TestService;
let worker: LongRunning | undefined;

beforeAll(async () => {
  fal = await startFalFake({ key: FAL_KEY, video: { size: RESULT_BYTES, open: () => largeVideo(RESULT_BYTES) }, pollsUntilDone: 1 });
  svc = await startTestService({ FAL_KEY, FAL_QUEUE_URL: fal.url, ENGINE_ROUTES: 'veo-3.1=fal,*=local' }, { worker: false });
});
afterAll(async () => {
  if (worker?.running()) worker.child.kill('SIGKILL');
  await worker?.waitForExit(5_000);
  await svc?.close();
  await fal?.close();
});

describe('a provider result is streamed into storage', () => {
  it(`a ${RESULT_BYTES / MB} MB result copied by a worker with a 200 MB heap: stored whole, peak RSS well under the file`, async () => {
    worker = spawnWorker(svc, {
      FAL_KEY,
      FAL_QUEUE_URL: fal.url,
      ENGINE_ROUTES: 'veo-3.1=fal,*=local',
      UPSTREAM_POLL_MS: '100',
      NODE_OPTIONS: '--max-old-space-size=200',
    });
    const t = await svc.team({ credits: 1000 });
    // Started: it beats (and so has loaded everything it runs with).
    const beats = () => svc.app.db.selectFrom('worker_heartbeats').select('worker_id').execute();
    await waitUntil(async () => (await beats()).length > 0, 60_000, 'the worker to start');
    // Resident memory sampled while the copy runs, from just before the generation exists.
    const before = await memory(worker.pid, 'VmRSS');
    let highest = before;
    const sampler = setInterval(() => void memory(worker!.pid, 'VmRSS').then((rss) => (highest = Math.max(highest, rss)), () => {}), 50);
    const res = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { model: 'veo-3.1', prompt: 'a long take', aspect_ratio: '16:9', duration: 4 } });
    expect(res.status).toBe(202);
    const done = await waitForGeneration(svc, t.key, res.body.generation_id as string, 240_000).finally(() => clearInterval(sampler));
    const peak = await memory(worker.pid, 'VmHWM');
    console.log(`worker copying ${RESULT_BYTES / MB} MB: peak RSS (VmHWM) ${(peak / MB).toFixed(1)} MB; resident ${(before / MB).toFixed(1)} MB before, at most ${(highest / MB).toFixed(1)} MB during`);

    expect(done.status).toBe('completed');
    const row = await svc.app.db.selectFrom('generations').select('result_keys').where('id', '=', res.body.generation_id as string).executeTakeFirstOrThrow();
    const key = (row.result_keys as string[])[0]!;
    expect((await fs.stat(path.join(svc.dataDir, 'files', key))).size).toBe(RESULT_BYTES);
    expect(worker.running()).toBe(true);
    expect(peak - before).toBeLessThan(COPY_GROWTH_LIMIT);
    expect(highest - before).toBeLessThan(COPY_GROWTH_LIMIT);
  }, 300_000);
});
