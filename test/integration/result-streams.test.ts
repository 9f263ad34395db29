import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalStorage, type LocalStorage } from '../../src/adapters/storage/local.ts';
import { DownloadError } from '../../src/adapters/net/download.ts';
import { storeResultStreams, type ResultStreamOptions } from '../../src/services/generations/results.ts';
import { makeMedia, testVideo } from '../support/media-probe.ts';

const MB = 1024 * 1024;
let root: string;
let storage: LocalStorage;
let small: Buffer;
let large: Buffer;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'adforge-results-'));
  storage = createLocalStorage({ root, publicBaseUrl: 'https://127.0.0.1', signingSecret: 'results-test' });
  small = await testVideo({ width: 160, height: 90, seconds: 2, audio: false });
  // Lossless noise: past the two 8 MB ends the duration probe reads, with its index (moov) at the end.
  large = await makeMedia(['-f', 'lavfi', '-i', 'nullsrc=size=640x360:rate=25:duration=3', '-vf', 'noise=alls=100:allf=t', '-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '0', '-pix_fmt', 'yuv420p'], 'mp4');
}, 120_000);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const g = { id: '00000000-0000-4000-8000-000000000001', team_id: '00000000-0000-4000-8000-000000000002' };
const tooLarge = () => new Error('too large');
const videoOnly: ResultStreamOptions = { maxBytes: 100 * MB, tooLarge, refuse: (t) => (t?.mime.startsWith('video/') ? undefined : new Error('not a video')) };
/** `bytes` as a stream of 64 KiB pieces, failing with `fail` after `failAfter` bytes when given. */
function pieces(bytes: Buffer, o: { failAfter?: number; fail?: Error } = {}): Readable {
  return Readable.from(
    (function* () {
      for (let at = 0; at < bytes.length; at += 64 * 1024) {
        if (o.failAfter !== undefined && at >= o.failAfter) throw o.fail ?? new Error('cut');
        yield bytes.subarray(at, at + 64 * 1024);
      }
    })(),
    { objectMode: false },
  );
}
/** Files under generations/ (data and content-type sidecars). */
const stored = async () => (await readdir(root, { recursive: true, withFileTypes: true })).filter((f) => f.isFile() && path.relative(root, f.parentPath).startsWith('generations')).map((f) => f.name);
const temps = async () => (await readdir(path.join(root, '.tmp')).catch(() => [] as string[])).length;

describe('storeResultStreams', () => {
  it('stores each result under the generation, sized as it arrived, and the first video\'s duration (index at the end, past the probed ends)', async () => {
    expect(large.length).toBeGreaterThan(16 * MB);
    const out = await storeResultStreams(storage, g, [async () => pieces(large), async () => pieces(small)], videoOnly);
    expect(out.keys).toEqual([`generations/${g.team_id}/${g.id}/1.mp4`, `generations/${g.team_id}/${g.id}/2.mp4`]);
    expect(out.bytes).toBe(large.length + small.length);
    expect((await stat(path.join(root, out.keys[0]!))).size).toBe(large.length);
    expect(out.meta.duration).toBe(3);
    await rm(path.join(root, 'generations'), { recursive: true });
  }, 60_000);

  it('a result cut half-way fails with its download error and leaves nothing stored', async () => {
    const cut = new DownloadError('network', 'the connection was cut');
    const e = await storeResultStreams(storage, g, [async () => pieces(large, { failAfter: 4 * MB, fail: cut })], videoOnly).catch((x: unknown) => x);
    expect(e).toBe(cut);
    expect(await stored()).toEqual([]);
    expect(await temps()).toBe(0);
  });

  it('a result past the limit fails with tooLarge and leaves nothing stored', async () => {
    const e = await storeResultStreams(storage, g, [async () => pieces(large)], { ...videoOnly, maxBytes: 2 * MB }).catch((x: unknown) => x);
    expect((e as Error).message).toBe('too large');
    expect(await stored()).toEqual([]);
    expect(await temps()).toBe(0);
  });

  it('a result that is not of the kind asked for is refused from its first bytes: nothing stored, the source stopped', async () => {
    const source = pieces(Buffer.concat([Buffer.from('<html>not a video</html>'), Buffer.alloc(MB)]));
    const e = await storeResultStreams(storage, g, [async () => source], videoOnly).catch((x: unknown) => x);
    expect((e as Error).message).toBe('not a video');
    expect(source.destroyed).toBe(true);
    expect(await stored()).toEqual([]);
  });
});
