import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EngineJob } from '../../src/adapters/engines/render-job.ts';
import { ffmpegArgs, inputArgs, probeArgs, probeMedia } from '../../src/adapters/engines/ffmpeg.ts';
import { withoutSound } from '../../src/adapters/engines/gemini/without-sound.ts';
import { createLocalEngine } from '../../src/adapters/engines/local/local-engine.ts';
import { audioDuration, convertVoice } from '../../src/adapters/engines/speech/voice-change.ts';
import { stillVideo } from '../../src/adapters/media/still-video.ts';
import { rendered } from '../support/local-render.ts';
import { memoryFile } from '../support/upstream-file.ts';
import { makeMedia, testVideo } from '../support/media-probe.ts';

/*
 * Every ffmpeg and ffprobe run on media from outside opens each input with a demuxer we chose
 * (`-f`) and the file protocol alone (`-protocol_whitelist file`). The child-process runner is
 * wrapped to record each command line the real tools are then given.
 */
const runs = vi.hoisted(() => [] as { tool: string; args: string[] }[]);
vi.mock('../../src/adapters/engines/child-process.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/adapters/engines/child-process.ts')>();
  return {
    ...real,
    runChild: (binary: string, args: string[], opts: Parameters<typeof real.runChild>[2]) => {
      runs.push({ tool: path.basename(binary), args: [...args] });
      return real.runChild(binary, args, opts);
    },
  };
});

interface Input {
  options: string[];
  file: string;
}

/** An ffmpeg command line's inputs, each with the options given before its `-i`. */
function ffmpegInputs(args: string[]): Input[] {
  const inputs: Input[] = [];
  let options: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-i') {
      inputs.push({ options, file: args[i + 1]! });
      options = [];
      i++;
    } else {
      options.push(args[i]!);
    }
  }
  return inputs;
}

const optionValue = (options: string[], name: string) => {
  const at = options.lastIndexOf(name);
  return at >= 0 ? options[at + 1] : undefined;
};

/** Each input of each recorded run: the tool, the file and the demuxer and protocols it is opened with. */
function openedInputs() {
  return runs.flatMap(({ tool, args }) => {
    const inputs = tool.startsWith('ffprobe') ? [{ options: args.slice(0, -1), file: args.at(-1)! }] : ffmpegInputs(args);
    return inputs.map(({ options, file }) => ({
      tool,
      file: path.basename(file),
      demuxer: optionValue(options, '-f'),
      protocols: optionValue(options, '-protocol_whitelist'),
    }));
  });
}

function expectAllLocked() {
  const opened = openedInputs();
  expect(opened.length).toBeGreaterThan(0);
  for (const input of opened) {
    expect(input.protocols, JSON.stringify(input)).toBe('file');
    expect(input.demuxer, JSON.stringify(input)).toMatch(/^[a-z0-9_]+$/);
  }
  return opened;
}

let tmpRoot: string;
let mp4: Buffer;
let webm: Buffer;
let mp3: Buffer;
let wav: Buffer;
let png: Buffer;

beforeAll(async () => {
  tmpRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-ffmpeg-inputs-'));
  [mp4, webm, mp3, wav, png] = await Promise.all([
    testVideo({ width: 64, height: 64, seconds: 1 }),
    makeMedia(['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10:duration=1', '-c:v', 'libvpx', '-b:v', '100k'], 'webm'),
    makeMedia(['-f', 'lavfi', '-i', 'sine=frequency=200:sample_rate=44100:duration=1', '-c:a', 'libmp3lame'], 'mp3'),
    makeMedia(['-f', 'lavfi', '-i', 'sine=frequency=200:sample_rate=8000:duration=1', '-c:a', 'pcm_s16le'], 'wav'),
    sharp({ create: { width: 32, height: 32, channels: 3, background: '#336699' } }).jpeg().toBuffer(),
  ]);
}, 60_000);
beforeEach(() => {
  runs.length = 0;
});
afterAll(async () => {
  await fs.rm(tmpRoot, { recursive: true, force: true });
});

const job = (over: Partial<EngineJob>): EngineJob => ({
  generationId: '3f1c6a8e-0000-4000-8000-000000000002',
  operation: 'localize',
  kind: 'video',
  params: {},
  width: 64,
  height: 64,
  durationSeconds: 1,
  quantity: 1,
  prompt: '',
  referenceImages: [],
  productImages: [],
  ...over,
});

describe('the command lines built for input media', () => {
  it('inputArgs and probeArgs open a file with its demuxer and the file protocol only', () => {
    const file = { path: '/tmp/x/input.mp4', demuxer: 'mov' as const };
    expect(inputArgs(file, ['-stream_loop', '-1'])).toEqual(['-stream_loop', '-1', '-protocol_whitelist', 'file', '-f', 'mov', '-i', '/tmp/x/input.mp4']);
    expect(probeArgs(file)).toEqual(['-v', 'error', '-protocol_whitelist', 'file', '-f', 'mov', '-print_format', 'json', '-show_format', '-show_streams', '/tmp/x/input.mp4']);
  });

  it('ffmpegArgs gives any input without a whitelist the file-only one, and keeps one that has it', () => {
    const args = ffmpegArgs(['-f', 'lavfi', '-i', 'sine', '-i', 'a.png', ...inputArgs({ path: 'b.wav', demuxer: 'wav' }), '-c:a', 'aac', 'out.mp4']);
    expect(ffmpegInputs(args).map((i) => [i.file, optionValue(i.options, '-protocol_whitelist'), optionValue(i.options, '-f')])).toEqual([
      ['sine', 'file', 'lavfi'],
      ['a.png', 'file', undefined],
      ['b.wav', 'file', 'wav'],
    ]);
    expect(args.filter((a) => a === '-protocol_whitelist')).toHaveLength(3);
    expect(args.slice(-3)).toEqual(['-c:a', 'aac', 'out.mp4']);
  });
});

describe('every tool run on input media is locked to its demuxer and to local files', () => {
  const engine = () => createLocalEngine({ tmpRoot });

  it.each([
    ['an MP4', () => mp4, 'input-video.mp4', 'mov'],
    ['a WebM', () => webm, 'input-video.webm', 'matroska'],
  ])('video edit, swap and localize of %s', async (_what, bytes, file, demuxer) => {
    const template = { name: 'Bold pop', font_size: 40, color: '#ffe600', uppercase: true, position: 'center' as const };
    await rendered(engine().run(job({ operation: 'video-edit', inputVideo: memoryFile(bytes(), 'video/mp4'), template }), new AbortController().signal));
    await rendered(engine().run(job({ operation: 'swap-avatar', inputVideo: memoryFile(bytes(), 'video/mp4'), avatar: { bytes: png, mime: 'image/jpeg' } }), new AbortController().signal));
    await rendered(engine().run(job({ operation: 'localize', inputVideo: memoryFile(bytes(), 'video/mp4'), params: { output_language: 'es' } }), new AbortController().signal));
    const opened = expectAllLocked();
    const inputs = opened.filter((i) => i.file.startsWith('input-video'));
    // Probed and rendered, three times each.
    expect(inputs.filter((i) => i.tool.startsWith('ffprobe'))).toHaveLength(3);
    expect(inputs.filter((i) => i.tool.startsWith('ffmpeg'))).toHaveLength(3);
    expect(new Set(inputs.map((i) => `${i.file} ${i.demuxer}`))).toEqual(new Set([`${file} ${demuxer}`]));
  });

  it('a talking avatar over a voiceover', async () => {
    await rendered(engine().run(job({ operation: 'talking-avatar', script: 'Hello.', voiceAudio: memoryFile(wav, 'audio/wav') }), new AbortController().signal));
    const opened = expectAllLocked();
    expect(opened.filter((i) => i.file === 'voice-input.wav').map((i) => i.demuxer)).toEqual(['wav', 'wav']);
  });

  it.each([
    ['an MP3', () => mp3, 'input.mp3', 'mp3'],
    ['a WAV', () => wav, 'input.wav', 'wav'],
    ['the sound track of an MP4', () => mp4, 'input.mp4', 'mov'],
  ])('speech to speech from %s: measured, converted, and the MP3 made measured', async (_what, bytes, file, demuxer) => {
    await audioDuration(bytes());
    await convertVoice({ input: bytes(), target: { pitchSemitones: 2 }, tmpRoot });
    const opened = expectAllLocked();
    expect(opened.filter((i) => i.file === file).map((i) => [i.tool.replace(/[^a-z].*/, ''), i.demuxer])).toEqual([
      ['ffprobe', demuxer],
      ['ffmpeg', demuxer],
    ]);
    expect(opened.filter((i) => i.file === 'speech.mp3').map((i) => i.demuxer)).toEqual(['mp3']);
  });

  it('probing bytes, muting a provider video and a face as a still video', async () => {
    await probeMedia(mp4, { kind: 'video' });
    await probeMedia(mp3);
    await (await withoutSound(Readable.from([mp4]))).toArray();
    await stillVideo(png, 1);
    expect(expectAllLocked().map((i) => i.demuxer)).toEqual(['mov', 'mp3', 'mov', 'image2']);
  });
});
