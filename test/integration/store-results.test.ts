import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalStorage } from '../../src/adapters/storage/local.ts';
import { createS3Storage } from '../../src/adapters/storage/s3.ts';
import type { Storage } from '../../src/adapters/storage/storage.ts';
import { storeResults, type ResultFile } from '../../src/services/generations/results.ts';
import { startS3Server } from '../support/s3-server.ts';
import { testVideo } from '../support/media-probe.ts';

// The one way a generation's files are stored, for the local engine (files on disk) and every
// provider (streams): on local disk and on S3 (s3rver). The tools' runs are recorded to see which
// file ffprobe measured.
const probed = vi.hoisted(() => [] as string[]);
vi.mock('../../src/adapters/engines/child-process.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/adapters/engines/child-process.ts')>();
  return {
    ...real,
    runChild: (binary: string, args: string[], opts: Parameters<typeof real.runChild>[2]) => {
      if (path.basename(binary).startsWith('ffprobe')) probed.push(args.at(-1)!);
      return real.runChild(binary, args, opts);
    },
  };
});

const g = { id: '3f1c6a8e-0000-4000-8000-00000000f001', team_id: '3f1c6a8e-0000-4000-8000-00000000f000' };
const tooLarge = () => new Error('too large');
let dir: string;
let video: Buffer;
let s3: Awaited<ReturnType<typeof startS3Server>>;
const backends: Record<string, () => Storage> = {};

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-store-results-'));
  [video, s3] = await Promise.all([testVideo({ width: 160, height: 120, seconds: 3 }), startS3Server('adforge-results')]);
  backends.local = () => createLocalStorage({ root: path.join(dir, 'files'), publicBaseUrl: 'https://adforge.test', signingSecret: 'results-test' });
  backends.s3 = () => createS3Storage({ bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true });
}, 60_000);

afterAll(async () => {
  await s3?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const streamed = (bytes: Buffer, mime: string, ext: string): ResultFile => ({ mime, ext, open: () => Readable.from([bytes]) });

describe.each(['local', 's3'])('storeResults on %s storage', (backend) => {
  it('stores each file under the generation\'s keys and measures a video from storage: in place on disk, a temp copy from S3', async () => {
    const storage = backends[backend]!();
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    probed.length = 0;
    const out = await storeResults(storage, g, [streamed(png, 'image/png', 'png'), streamed(video, 'video/mp4', 'mp4')], { maxBytes: 10 * 1024 * 1024, tooLarge });
    expect(out.keys).toEqual([`generations/${g.team_id}/${g.id}/1.png`, `generations/${g.team_id}/${g.id}/2.mp4`]);
    expect(out.bytes).toBe(png.length + video.length);
    expect(out.meta.duration).toBeCloseTo(3, 1);
    expect((await storage.get(out.keys[1]!))?.bytes.equals(video)).toBe(true);
    expect(probed).toHaveLength(1);
    if (backend === 'local') expect(probed[0]).toBe(path.join(dir, 'files', out.keys[1]!));
    else expect(path.basename(path.dirname(probed[0]!))).toMatch(/^adforge-result-/);
  });

  it('a file past the limit fails the whole store and leaves none of its files behind', async () => {
    const storage = backends[backend]!();
    const big = Buffer.alloc(2048, 1);
    const err = await storeResults(storage, { ...g, id: g.id.replace('f001', 'f002') }, [streamed(Buffer.alloc(10), 'image/png', 'png'), streamed(big, 'image/png', 'png')], { maxBytes: 1024, tooLarge }).catch((e: unknown) => e);
    expect(err).toEqual(new Error('too large'));
    for (const n of [1, 2]) expect(await storage.get(`generations/${g.team_id}/${g.id.replace('f001', 'f002')}/${n}.png`)).toBeNull();
  });
});

it('a rendered file is measured where it lies, not read back from storage', async () => {
  // The file on disk lasts 5 s, the stream stored 3 s: the duration says which one was probed.
  const file = path.join(dir, 'rendered.mp4');
  await fs.writeFile(file, await testVideo({ width: 160, height: 120, seconds: 5 }));
  const storage = backends.local!();
  const out = await storeResults(storage, { ...g, id: g.id.replace('f001', 'f003') }, [{ mime: 'video/mp4', ext: 'mp4', path: file, open: () => Readable.from([video]) }], { maxBytes: 10 * 1024 * 1024, tooLarge });
  expect(out.meta.duration).toBeCloseTo(5, 1);
});
