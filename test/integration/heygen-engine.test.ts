import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHeyGenEngine } from '../../src/adapters/engines/heygen/heygen-engine.ts';
import { UpstreamError, type Engine, type UpstreamFile, type UpstreamRequest } from '../../src/adapters/engines/engine-contract.ts';
import { startHeyGenFake } from '../support/heygen-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import { wavSeconds } from '../support/wav.ts';
import { memoryFile } from '../support/upstream-file.ts';

/*
 * The HeyGen adapter against the contract-held fake, without the service around it: what it sends
 * for an input HeyGen does not take as it is, how it reads each GET's documented statuses, and its
 * free operator check.
 */
const KEY = 'hg-engine-test-key';
let fake: Awaited<ReturnType<typeof startHeyGenFake>>;
let engine: Engine;
const signal = () => AbortSignal.timeout(20_000);

beforeAll(async () => {
  fake = await startHeyGenFake({ key: KEY, video: await testVideo({ width: 64, height: 64, seconds: 1 }), pollsUntilDone: 1 });
  engine = createHeyGenEngine({ apiUrl: fake.url, apiKey: KEY, allowPrivate: true, timeoutMs: 10_000 });
});
afterAll(() => fake?.close());

const file = (bytes: Buffer, mime: string, url = 'https://example.com/input'): UpstreamFile => memoryFile(bytes, mime, url);
const request = (operation: UpstreamRequest['operation'], inputs: Partial<UpstreamRequest['inputs']>, params: Record<string, unknown> = {}): UpstreamRequest => ({
  generationId: `gen-${Math.random().toString(36).slice(2)}`,
  operation,
  params,
  inputs: { prompt: '', references: [], brandImages: [], productImages: [], ...inputs },
});
const attempt = () => ({ id: crypto.randomUUID() });

async function pollUntilEnded(handle: Record<string, unknown>) {
  for (let i = 0; i < 10; i++) {
    const s = await engine.poll(handle, signal());
    if (s.state !== 'pending') return s;
  }
  throw new Error('still pending');
}

describe('inputs HeyGen takes only in some forms', () => {
  it("a WebP face (a product's image may be one) is sent as PNG: HeyGen's assets take png and jpeg images only", async () => {
    const webp = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#c08050' } }).webp().toBuffer();
    const sub = await engine.submit(request('talking-avatar', { face: file(webp, 'image/webp'), speech: file(wavSeconds(0.5), 'audio/wav') }, { lipsync_model: 'heygen-avatar4' }), attempt(), signal());
    const create = fake.videoCreates.at(-1)!;
    expect(sub.providerJobId).toBe([...fake.jobs.keys()].at(-1));
    const face = fake.assets.get(create.body.image.asset_id)!;
    expect((await fileTypeFromBuffer(face.bytes))?.mime).toBe('image/png');
    expect((await sharp(face.bytes).metadata()).width).toBe(32);
  });

  it('speech in a format HeyGen does not take is refused before anything is uploaded', async () => {
    const before = fake.assets.size;
    const ogg = Buffer.concat([Buffer.from('OggS\0\x02', 'binary'), Buffer.alloc(64)]);
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } }).png().toBuffer();
    const err = await engine.submit(request('talking-avatar', { face: file(png, 'image/png'), speech: file(ogg, 'audio/ogg') }), attempt(), signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).failure).toBe('refused');
    expect((err as UpstreamError).message).toMatch(/speech.*mp3 or wav/i);
    expect(fake.assets.size).toBe(before);
  });
});

describe("each GET's documented statuses", () => {
  it('a face swap HeyGen answers not_found for fails with that word instead of being polled as an unknown status', async () => {
    fake.loseNextExecution();
    const sub = await engine.submit(request('swap-avatar', { face: file(Buffer.alloc(0), 'image/png', 'https://example.com/face.png'), video: file(Buffer.alloc(0), 'video/mp4', 'https://example.com/clip.mp4') }), attempt(), signal());
    const status = await engine.poll(sub.handle, signal());
    expect(status).toEqual({ state: 'failed', message: expect.stringMatching(/not_found/) });
  });

  it("a failed face swap carries HeyGen's error.message; a finished one its output.video_url", async () => {
    const inputs = { face: file(Buffer.alloc(0), 'image/png', 'https://example.com/face.png'), video: file(Buffer.alloc(0), 'video/mp4', 'https://example.com/clip.mp4') };
    fake.refuseNextWorkflow('No face found in the source image');
    const failed = await engine.submit(request('swap-avatar', inputs), attempt(), signal());
    expect(await pollUntilEnded(failed.handle)).toEqual({ state: 'failed', message: 'HeyGen could not make the video: No face found in the source image' });
    const ok = await engine.submit(request('swap-avatar', inputs), attempt(), signal());
    expect(await pollUntilEnded(ok.handle)).toEqual({ state: 'succeeded', outputs: [{ url: `${fake.url}/files/${ok.providerJobId}.mp4` }] });
  });

  it('a translation waits through pending and running and ends with its video_url', async () => {
    const sub = await engine.submit(request('localize', { video: file(Buffer.alloc(0), 'video/mp4', 'https://example.com/clip.mp4') }, { output_language: 'fr', mode: 'speed' }), attempt(), signal());
    expect(await engine.poll(sub.handle, signal())).toEqual({ state: 'pending', detail: 'pending', progress: { fraction: 0, stage: 'queued' } });
    expect(await pollUntilEnded(sub.handle)).toEqual({ state: 'succeeded', outputs: [{ url: `${fake.url}/files/${sub.providerJobId}.mp4` }] });
  });
});

describe('the free operator check', () => {
  it('targets: the API’s own names for each route HeyGen serves', () => {
    expect(engine.targets!('heygen-avatar4')).toEqual(['CreateVideoFromImage']);
    expect(engine.targets!('talking-avatar')).toEqual(['CreateVideoFromImage']);
    expect(engine.targets!('swap-avatar')).toEqual(['FaceswapNode']);
    expect(engine.targets!('localize')).toContain('French (France)');
    expect(engine.targets!('lipsync-2.0')).toEqual([]);
    expect(engine.targets!('*')).toEqual(expect.arrayContaining(['CreateVideoFromImage', 'FaceswapNode', 'Portuguese (Brazil)']));
  });

  it('a good key and routes HeyGen still serves: every target ok', async () => {
    const results = await engine.check!(['CreateVideoFromImage', 'FaceswapNode', 'French (France)'], signal());
    expect(results.map((r) => [r.target, r.outcome])).toEqual([
      ['key', 'ok'],
      ['CreateVideoFromImage', 'ok'],
      ['FaceswapNode', 'ok'],
      ['French (France)', 'ok'],
    ]);
    expect(results[0]!.detail).toMatch(/adforge-test/);
  });

  it("a refused key is key_refused in HeyGen's own words", async () => {
    const wrong = createHeyGenEngine({ apiUrl: fake.url, apiKey: 'not-the-key', allowPrivate: true });
    const [key, ...rest] = await wrong.check!(['FaceswapNode'], signal());
    expect(key).toEqual({ target: 'key', outcome: 'key_refused', detail: expect.stringContaining('Invalid or expired API key') });
    expect(rest.map((r) => r.outcome)).toEqual(['key_refused']);
  });

  it('a language HeyGen no longer lists is model_gone', async () => {
    const at = fake.languages.indexOf('French (Canada)');
    fake.languages.splice(at, 1);
    try {
      const results = await engine.check!(['French (Canada)', 'French (France)'], signal());
      expect(results.find((r) => r.target === 'French (Canada)')).toEqual({ target: 'French (Canada)', outcome: 'model_gone', detail: expect.stringContaining('no longer lists') });
      expect(results.find((r) => r.target === 'French (France)')?.outcome).toBe('ok');
    } finally {
      fake.languages.splice(at, 0, 'French (Canada)');
    }
  });

  it('an unreachable HeyGen is unreachable, not a refused key', async () => {
    const away = createHeyGenEngine({ apiUrl: 'http://127.0.0.1:9', apiKey: KEY, allowPrivate: true });
    const results = await away.check!(['FaceswapNode'], signal());
    expect(results.map((r) => r.outcome)).toEqual(['unreachable', 'unreachable']);
  });
});

describe('talking avatars read many at a time by id (GET /v3/videos/statuses)', () => {
  const talking = async () => {
    const face = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#a07050' } }).png().toBuffer();
    return engine.submit(request('talking-avatar', { face: file(face, 'image/png'), speech: file(wavSeconds(0.5), 'audio/wav') }, { lipsync_model: 'heygen-avatar4' }), attempt(), signal());
  };
  const queued = { state: 'pending', detail: 'queued', progress: { fraction: 0, stage: 'queued' } };

  it('one read names every asked-for video by id; those still waiting are answered, an ended one is left to its own read (its result is there)', async () => {
    const a = await talking();
    fake.refuseNextVideo('No face detected in the image');
    const b = await talking();
    const reads = fake.statusReads.length;
    const first = await engine.batchRead!.pollMany([a.handle, b.handle], signal(), async () => true);
    expect(first).toEqual(new Map([[a.providerJobId, queued], [b.providerJobId, queued]]));
    expect(fake.statusReads.slice(reads)).toEqual([{ ids: [a.providerJobId, b.providerJobId] }]);
    const second = await engine.batchRead!.pollMany([a.handle, b.handle], signal(), async () => true);
    expect(second.size).toBe(0);
    expect(await engine.poll(a.handle, signal())).toEqual({ state: 'succeeded', outputs: [{ url: `${fake.url}/files/${a.providerJobId}.mp4` }] });
    expect(await engine.poll(b.handle, signal())).toEqual({ state: 'failed', message: 'HeyGen could not make the video: No face detected in the image' });
    expect(engine.batchRead!.handles).toEqual({ kind: 'video' });
    expect(engine.batchRead!.size).toBe(100);
  });

  it('a video behind hundreds of newer ones on the account is found in the same single read', async () => {
    const old = await talking();
    fake.addOtherVideos(350);
    const reads = fake.statusReads.length;
    let asked = 0;
    const found = await engine.batchRead!.pollMany([old.handle], signal(), async () => (asked++, true));
    expect(found).toEqual(new Map([[old.providerJobId, queued]]));
    expect(fake.statusReads.length - reads).toBe(1);
    expect(asked).toBe(0);
    expect(fake.refused).toEqual([]);
  });

  it('an id HeyGen does not know (not_found) is left to its own read', async () => {
    const found = await engine.batchRead!.pollMany([{ kind: 'video', id: 'vid_gone' }], signal(), async () => true);
    expect(found.size).toBe(0);
  });
});

describe("HeyGen's queued words", () => {
  it("a video whose read shows `waiting` (the create's own word for a queued video) is queued, not an undocumented status", async () => {
    const face = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#70a050' } }).png().toBuffer();
    fake.showQueuedAs('waiting');
    try {
      const sub = await engine.submit(request('talking-avatar', { face: file(face, 'image/png'), speech: file(wavSeconds(0.5), 'audio/wav') }, { lipsync_model: 'heygen-avatar4' }), attempt(), signal());
      expect(await engine.poll(sub.handle, signal())).toEqual({ state: 'pending', detail: 'waiting', progress: { fraction: 0, stage: 'queued' } });
    } finally {
      fake.showQueuedAs('pending');
    }
  });
});

describe('a create HeyGen takes longer to answer than the call may wait', () => {
  it('is an unknown outcome (the video exists), never a refusal or a passing failure a new key could retry', async () => {
    const hurried = createHeyGenEngine({ apiUrl: fake.url, apiKey: KEY, allowPrivate: true, timeoutMs: 300 });
    const face = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#5070a0' } }).png().toBuffer();
    const before = fake.videoCreates.length;
    fake.delaySubmits(1_000);
    try {
      const err = await hurried.submit(request('talking-avatar', { face: file(face, 'image/png'), speech: file(wavSeconds(0.5), 'audio/wav') }, { lipsync_model: 'heygen-avatar4' }), attempt(), signal()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).failure).toBe('unsent_unknown');
      expect(fake.videoCreates.length - before).toBe(1);
    } finally {
      fake.delaySubmits(0);
    }
  });
});
