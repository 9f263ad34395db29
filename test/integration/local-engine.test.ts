import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, type EngineAsset, type EngineJob, type EngineMedia } from '../../src/adapters/engines/render-job.ts';
import { FfmpegError, runFfmpeg } from '../../src/adapters/engines/ffmpeg.ts';
import { createLocalEngine } from '../../src/adapters/engines/local/local-engine.ts';
import { synthesize } from '../../src/adapters/engines/speech/tts.ts';
import { rendered } from '../support/local-render.ts';
import { memoryFile } from '../support/upstream-file.ts';
import { imageDifference, imageInfo, makeMedia, testVideo, videoInfo } from '../support/media-probe.ts';

let tmpRoot: string;
let engine: ReturnType<typeof createLocalEngine>;
let withSound: EngineMedia;
let silent: EngineMedia;
let face: EngineAsset;
let product: EngineAsset;
let logo: EngineAsset;

const png = (bytes: Buffer): EngineAsset => ({ bytes, mime: 'image/png' });
const signal = () => new AbortController().signal;

function job(over: Partial<EngineJob>): EngineJob {
  return {
    generationId: '3f1c6a8e-0000-4000-8000-000000000001',
    operation: 'text-to-image',
    kind: 'image',
    params: {},
    width: 1024,
    height: 1024,
    quantity: 1,
    prompt: 'Fresh lemonade for a sunny summer weekend, thirty percent off',
    referenceImages: [],
    productImages: [],
    ...over,
  };
}

async function expectVideo(bytes: Buffer, want: { width: number; height: number; seconds: number; audio: boolean }) {
  const info = await videoInfo(bytes);
  expect(info.videoCodec).toBe('h264');
  expect(info.pixelFormat).toBe('yuv420p');
  expect(info.format).toContain('mp4');
  expect([info.width, info.height]).toEqual([want.width, want.height]);
  expect(Math.abs((info.durationSeconds ?? 0) - want.seconds)).toBeLessThanOrEqual(0.1);
  expect(info.audioCodec).toBe(want.audio ? 'aac' : null);
  // +faststart: the moov atom comes before the media data.
  expect(bytes.indexOf('moov')).toBeLessThan(bytes.indexOf('mdat'));
}

beforeAll(async () => {
  tmpRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-local-engine-test-'));
  engine = createLocalEngine({ tmpRoot, speak: synthesize });
  const svg = (w: number, h: number, body: string) => sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${body}</svg>`)).png().toBuffer();
  const [a, b, c, d, e] = await Promise.all([
    testVideo({ width: 320, height: 240, seconds: 2 }),
    testVideo({ width: 320, height: 240, seconds: 2, audio: false }),
    svg(512, 512, '<rect width="512" height="512" fill="#f4f1de"/><ellipse cx="256" cy="220" rx="92" ry="110" fill="#c68642"/>'),
    svg(600, 800, '<rect width="600" height="800" fill="#eeeeee"/><rect x="200" y="100" width="200" height="600" rx="40" fill="#2a9d8f"/>'),
    svg(200, 200, '<circle cx="100" cy="100" r="90" fill="#ffcc00"/>'),
  ]);
  withSound = memoryFile(a, 'video/mp4');
  silent = memoryFile(b, 'video/mp4');
  [face, product, logo] = [png(c), png(d), png(e)];
});

afterAll(async () => {
  await fs.rm(tmpRoot, { recursive: true, force: true });
});

describe('local engine: images', () => {
  it('renders `quantity` distinct PNGs of exactly the asked size', async () => {
    const { files } = await rendered(engine.run(job({ quantity: 3 }), signal()));
    expect(files).toHaveLength(3);
    for (const f of files) {
      expect(f).toMatchObject({ mime: 'image/png', ext: 'png' });
      expect(await imageInfo(f.bytes)).toEqual({ format: 'png', width: 1024, height: 1024 });
    }
    const [a, b, c] = files.map((f) => f.bytes) as [Buffer, Buffer, Buffer];
    for (const [x, y] of [[a, b], [b, c], [a, c]] as const) expect(await imageDifference(x, y)).toBeGreaterThan(3);
  });

  it.each([
    ['16:9 2k image edit with brand', { operation: 'image-edit', width: 2048, height: 1152, quantity: 2 }],
    ['9:16 1k product shot', { operation: 'product-shots', width: 576, height: 1024, quantity: 2 }],
    ['4:3 1k text-to-image with products', { operation: 'text-to-image', width: 1024, height: 768, quantity: 1 }],
  ] as const)('%s', async (_name, over) => {
    const { files } = await rendered(engine.run(
      job({
        ...over,
        referenceImages: [face],
        productImages: [product],
        brand: { name: 'Lemon Co', colorPrimary: '#f4d35e', colorAccent: '#ee964b', logo, reference: null },
        template: { name: 'Studio marble', background: '#f5f0e8', prompt: 'on marble' },
      }),
      signal(),
    ));
    expect(files).toHaveLength(over.quantity);
    for (const f of files) expect(await imageInfo(f.bytes)).toEqual({ format: 'png', width: over.width, height: over.height });
  });

  it('renders a 4k image at its exact size', async () => {
    const { files } = await rendered(engine.run(job({ width: 3072, height: 4096, quantity: 1 }), signal()));
    expect(await imageInfo(files[0]!.bytes)).toEqual({ format: 'png', width: 3072, height: 4096 });
  });

  it('fails for good on an unreadable input image', async () => {
    const broken = { bytes: Buffer.from('not an image'), mime: 'image/png' };
    const err = await engine.run(job({ productImages: [broken] }), signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ transient: false, message: 'an input image could not be read' });
  });
});

describe('local engine: videos', () => {
  it('ai-video: silent unless generate_audio', async () => {
    const { files } = await rendered(engine.run(job({ operation: 'ai-video', kind: 'video', width: 640, height: 360, durationSeconds: 3 }), signal()));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ mime: 'video/mp4', ext: 'mp4' });
    await expectVideo(files[0]!.bytes, { width: 640, height: 360, seconds: 3, audio: false });
  });

  it('ai-video: with generated audio, a first frame and a brand', async () => {
    const { files } = await rendered(engine.run(
      job({
        operation: 'ai-video',
        kind: 'video',
        width: 360,
        height: 640,
        durationSeconds: 2,
        params: { generate_audio: true },
        referenceImages: [face],
        brand: { name: 'Lemon Co', colorPrimary: '#112233', colorAccent: null, logo, reference: null },
      }),
      signal(),
    ));
    await expectVideo(files[0]!.bytes, { width: 360, height: 640, seconds: 2, audio: true });
  });

  it("talking-avatar: the script spoken by eSpeak NG in the job's voice sets the duration", async () => {
    const script = 'Meet the new sparkling lemonade. Fresh lemons, a hint of mint.';
    const voice = { language: 'en-gb', variant: 'f3', pitch: 55, speed: 1 };
    const spoken = await synthesize({ text: script, voice });
    const { files } = await rendered(engine.run(job({ operation: 'talking-avatar', kind: 'video', width: 360, height: 640, prompt: '', script, avatar: face, voice }), signal()));
    await expectVideo(files[0]!.bytes, { width: 360, height: 640, seconds: spoken.durationSeconds, audio: true });
  });

  it('talking-avatar: a voiceover sets the duration', async () => {
    const voice = await makeMedia(['-f', 'lavfi', '-i', 'sine=frequency=220:duration=2.5', '-c:a', 'libmp3lame'], 'mp3');
    const { files } = await rendered(engine.run(
      job({ operation: 'talking-avatar', kind: 'video', width: 320, height: 320, prompt: '', script: 'Hello there, friends.', durationSeconds: 9, avatar: face, voiceAudio: memoryFile(voice, 'audio/mpeg') }),
      signal(),
    ));
    await expectVideo(files[0]!.bytes, { width: 320, height: 320, seconds: 2.5, audio: true });
  });

  it('swap-avatar: loops a shorter input to the asked length and keeps its sound', async () => {
    const { files } = await rendered(engine.run(
      job({ operation: 'swap-avatar', kind: 'video', width: 480, height: 270, durationSeconds: 3, inputVideo: withSound, avatar: face }),
      signal(),
    ));
    await expectVideo(files[0]!.bytes, { width: 480, height: 270, seconds: 3, audio: true });
  });

  it('localize: cuts to the asked length, or keeps the input length when dynamic', async () => {
    const base = { operation: 'localize', kind: 'video', width: 320, height: 320, durationSeconds: 1.5, inputVideo: withSound } as const;
    const fixed = await rendered(engine.run(job({ ...base, params: { output_language: 'es' } }), signal()));
    await expectVideo(fixed.files[0]!.bytes, { width: 320, height: 320, seconds: 1.5, audio: true });
    const dynamic = await rendered(engine.run(job({ ...base, params: { output_language: 'fr', enable_dynamic_duration: true } }), signal()));
    await expectVideo(dynamic.files[0]!.bytes, { width: 320, height: 320, seconds: 2, audio: true });
  });

  it('video-edit: burns styled captions in; a silent input stays silent', async () => {
    const { files } = await rendered(engine.run(
      job({
        operation: 'video-edit',
        kind: 'video',
        width: 360,
        height: 640,
        prompt: '',
        inputVideo: silent,
        params: { language: 'de' },
        template: { name: 'Bold pop', font_size: 80, color: '#ffe600', uppercase: true, position: 'center' },
      }),
      signal(),
    ));
    await expectVideo(files[0]!.bytes, { width: 360, height: 640, seconds: 2, audio: false });
  });

  it('fails for good on an unreadable input video, without leaking paths', async () => {
    // An MP4 header and nothing else: a container we take, which ffprobe cannot read.
    const ftyp = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom', 'latin1'), Buffer.from([0, 0, 2, 0]), Buffer.from('isommp41', 'latin1')]);
    const err = await engine
      .run(job({ operation: 'localize', kind: 'video', width: 320, height: 320, durationSeconds: 1, inputVideo: memoryFile(ftyp, 'video/mp4') }), signal())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ transient: false, message: 'the input video could not be read' });
  });

  it('refuses for good an input video in a container it does not take, naming those it takes', async () => {
    const err = await engine
      .run(job({ operation: 'localize', kind: 'video', width: 320, height: 320, durationSeconds: 1, inputVideo: memoryFile(Buffer.from('nope'), 'video/mp4') }), signal())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ transient: false, message: 'the input video is not a file we take: MP4, MOV, WebM or Matroska' });
  });
});

describe('local engine without fonts', () => {
  it('renders without text instead of failing', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-nofonts-'));
    try {
      // fontconfig reads its configuration once per process: hence a child process.
      const conf = path.join(dir, 'fonts.conf');
      await fs.writeFile(conf, `<?xml version="1.0"?><fontconfig><dir>${dir}/none</dir><cachedir>${dir}/cache</cachedir></fontconfig>`);
      const src = (f: string) => JSON.stringify(fileURLToPath(new URL(`../../src/adapters/engines/local/${f}`, import.meta.url)));
      const code = `
        import { rm, stat } from 'node:fs/promises';
        import { canRenderText } from ${src('text.ts')};
        import { createLocalEngine } from ${src('local-engine.ts')};
        import { synthesize } from ${JSON.stringify(fileURLToPath(new URL('../../src/adapters/engines/speech/tts.ts', import.meta.url)))};
        const base = { generationId: 'g', params: {}, quantity: 1, prompt: 'No fonts here', referenceImages: [], productImages: [] };
        const engine = createLocalEngine({ speak: synthesize });
        const image = await engine.run({ ...base, operation: 'text-to-image', kind: 'image', width: 512, height: 512 }, new AbortController().signal);
        const video = await engine.run({ ...base, operation: 'talking-avatar', kind: 'video', width: 160, height: 160, script: 'Hello there.' }, new AbortController().signal);
        console.log(JSON.stringify({ text: await canRenderText(), image: (await stat(image.files[0].path)).size, video: (await stat(video.files[0].path)).size }));
        await rm(image.dir, { recursive: true });
        await rm(video.dir, { recursive: true });`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { env: { ...process.env, FONTCONFIG_FILE: conf } });
      const out = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { text: boolean; image: number; video: number };
      expect(out.text).toBe(false);
      expect(out.image).toBeGreaterThan(0);
      expect(out.video).toBeGreaterThan(0);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('local engine: failures, aborts and cleanup', () => {
  it('a local engine created without a speech synthesizer speaks no script: a talking avatar then needs a voiceover', async () => {
    const mute = createLocalEngine({ tmpRoot });
    const e = await mute.run(job({ operation: 'talking-avatar', kind: 'video', width: 160, height: 160, prompt: '', script: 'Hello there.' }), signal()).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(EngineError);
    expect(e).toMatchObject({ transient: false, message: 'this local engine has no speech synthesizer: a talking avatar needs a voiceover' });
  });

  it('[[fail]] fails for good, [[flaky]] transiently, from the prompt or the script', async () => {
    const fail = await engine.run(job({ prompt: 'a cat [[fail]]' }), signal()).catch((e: unknown) => e);
    expect(fail).toBeInstanceOf(EngineError);
    expect(fail).toMatchObject({ transient: false, message: 'the local engine was asked to fail ([[fail]] in the prompt)' });
    const flaky = await engine.run(job({ operation: 'talking-avatar', kind: 'video', prompt: '', script: 'hi [[flaky]]' }), signal()).catch((e: unknown) => e);
    expect(flaky).toBeInstanceOf(EngineError);
    expect(flaky).toMatchObject({ transient: true });
  });

  it('an abort during the delay rejects at once', async () => {
    const slow = createLocalEngine({ delayMs: 30_000, tmpRoot });
    const ac = new AbortController();
    const reason = new Error('worker shutting down');
    const started = Date.now();
    setTimeout(() => ac.abort(reason), 50);
    await expect(slow.run(job({}), ac.signal)).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('an abort during rendering kills ffmpeg and removes the temp dir', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const run = engine.run(job({ operation: 'ai-video', kind: 'video', width: 1280, height: 720, durationSeconds: 60 }), ac.signal);
    setTimeout(() => ac.abort(), 400);
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await fs.readdir(tmpRoot)).toEqual([]);
  });

  it('an abort while the input video stalls before its first bytes rejects at once and removes the temp dir', async () => {
    const ac = new AbortController();
    const stalled: EngineMedia = { open: async () => ({ stream: new PassThrough(), mime: 'video/mp4' }) };
    const started = Date.now();
    const run = engine.run(job({ operation: 'localize', kind: 'video', width: 320, height: 320, durationSeconds: 1, inputVideo: stalled }), ac.signal);
    setTimeout(() => ac.abort(new Error('cancelled')), 200);
    await expect(run).rejects.toThrow('cancelled');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await fs.readdir(tmpRoot)).toEqual([]);
  });

  it('an ffmpeg timeout becomes a transient EngineError with a user-safe message', async () => {
    const hasty = createLocalEngine({ tmpRoot, ffmpegTimeoutMs: 200 });
    const err = await hasty.run(job({ operation: 'ai-video', kind: 'video', width: 1280, height: 720, durationSeconds: 60 }), signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ transient: true, message: 'rendering the video took too long' });
    expect((err as EngineError).cause).toBeInstanceOf(FfmpegError);
  });

  it('runFfmpeg rejects with the tool diagnostics', async () => {
    const err = await runFfmpeg(['-i', path.join(tmpRoot, 'missing.mp4'), '-f', 'null', '-']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FfmpegError);
    expect(err).toMatchObject({ reason: 'failed' });
    expect((err as Error).message).toContain('No such file');
  });

  it('leaves no temp dirs behind', async () => {
    expect(await fs.readdir(tmpRoot)).toEqual([]);
  });
});
