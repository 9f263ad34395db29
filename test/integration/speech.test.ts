import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/adapters/engines/render-job.ts';
import { probeMedia, runFfmpeg } from '../../src/adapters/engines/ffmpeg.ts';
import { synthesize } from '../../src/adapters/engines/speech/tts.ts';
import { audioDuration, convertVoice, voiceFilters } from '../../src/adapters/engines/speech/voice-change.ts';

// 250 characters of ad copy, with commas and full stops where a speaker pauses.
const AD =
  'Our summer sale starts today. Get twenty percent off every pair of shoes in our stores, and free delivery ' +
  'on orders over fifty dollars. Visit us this weekend, try the new collection, and find something you love. ' +
  'The offer ends on Sunday, at midnight.';
const RATE = 16_000;

let tmp: string;
let english: Awaited<ReturnType<typeof synthesize>>;
let sine: Buffer;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-speech-test-'));
  const sineFile = path.join(tmp, 'sine.wav');
  await runFfmpeg(['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=3', sineFile]);
  [english, sine] = await Promise.all([synthesize({ text: AD, voice: { language: 'en-us' } }), fs.readFile(sineFile)]);
});

afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** Decodes any audio to mono float samples at 16 kHz. */
async function samples(bytes: Buffer): Promise<Float32Array> {
  const dir = await fs.mkdtemp(path.join(tmp, 'pcm-'));
  await fs.writeFile(path.join(dir, 'in'), bytes);
  await runFfmpeg(['-i', 'in', '-f', 'f32le', '-ac', '1', '-ar', String(RATE), 'out.raw'], { cwd: dir });
  const raw = await fs.readFile(path.join(dir, 'out.raw'));
  return new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4);
}

/** RMS of each 20 ms frame. */
function envelope(x: Float32Array): number[] {
  const n = RATE / 50;
  const out: number[] = [];
  for (let i = 0; i + n <= x.length; i += n) {
    let sum = 0;
    for (let j = i; j < i + n; j++) sum += (x[j] ?? 0) ** 2;
    out.push(Math.sqrt(sum / n));
  }
  return out;
}

/** Loudness, share of frames with sound, and gaps of >= 60 ms between sounds (35 dB under the peak). */
function speechShape(x: Float32Array): { rmsDb: number; active: number; pauses: number } {
  let sum = 0;
  for (const v of x) sum += v * v;
  const env = envelope(x);
  const floor = Math.max(...env) * 10 ** (-35 / 20);
  let pauses = 0;
  let quiet = 0;
  let heard = false;
  for (const e of env) {
    if (e <= floor) quiet++;
    else {
      if (heard && quiet >= 3) pauses++;
      heard = true;
      quiet = 0;
    }
  }
  return { rmsDb: 10 * Math.log10(sum / x.length), active: env.filter((e) => e > floor).length / env.length, pauses };
}

/** Median pitch (Hz) of the loud frames, by normalized autocorrelation over 70-400 Hz. */
function medianPitch(x: Float32Array): number {
  const n = 640;
  const loud = Math.max(...envelope(x)) * 0.25;
  const found: number[] = [];
  for (let i = 0; i + n + RATE / 70 < x.length; i += n / 2) {
    let energy = 0;
    for (let j = i; j < i + n; j++) energy += (x[j] ?? 0) ** 2;
    if (Math.sqrt(energy / n) < loud) continue;
    let best = 0;
    let bestLag = 0;
    for (let lag = Math.floor(RATE / 400); lag <= RATE / 70; lag++) {
      let c = 0;
      let e2 = 0;
      for (let j = i; j < i + n; j++) {
        c += (x[j] ?? 0) * (x[j + lag] ?? 0);
        e2 += (x[j + lag] ?? 0) ** 2;
      }
      const r = c / Math.sqrt(energy * e2 + 1e-12);
      if (r > best) [best, bestLag] = [r, lag];
    }
    if (best > 0.6) found.push(RATE / bestLag);
  }
  found.sort((a, b) => a - b);
  return found[Math.floor(found.length / 2)] ?? 0;
}

/** The strongest frequency (1 Hz steps, 100-1500 Hz) of the middle second, by a DFT at each. */
function dominantFrequency(x: Float32Array): number {
  const mid = x.subarray(Math.floor(x.length / 2) - RATE / 2, Math.floor(x.length / 2) + RATE / 2);
  let best = 0;
  let bestF = 0;
  for (let f = 100; f <= 1500; f++) {
    let re = 0;
    let im = 0;
    const w = (2 * Math.PI * f) / RATE;
    for (let i = 0; i < mid.length; i++) {
      re += (mid[i] ?? 0) * Math.cos(w * i);
      im += (mid[i] ?? 0) * Math.sin(w * i);
    }
    if (re * re + im * im > best) [best, bestF] = [re * re + im * im, f];
  }
  return bestF;
}

function correlation(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  const mean = (x: number[]) => x.slice(0, n).reduce((s, v) => s + v, 0) / n;
  const [ma, mb] = [mean(a), mean(b)];
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < n; i++) {
    const [da, db] = [(a[i] ?? 0) - ma, (b[i] ?? 0) - mb];
    ab += da * db;
    aa += da * da;
    bb += db * db;
  }
  return ab / Math.sqrt(aa * bb);
}

/** This process's running synthesizer children (Linux /proc). */
async function synthesizerChildren(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && (await fs.readFile(`/proc/${entry}/cmdline`, 'utf8')).includes('espeak-child')) {
        found.push(Number(entry));
      }
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

describe('text to speech', () => {
  it('speaks 250 characters of English as an MP3 of plausible length, measured', async () => {
    expect(AD).toHaveLength(250);
    expect(english.mime).toBe('audio/mpeg');
    const info = await probeMedia(english.bytes);
    expect(info.audioCodec).toBe('mp3');
    expect(info.videoCodec).toBeNull();
    expect(Math.abs((info.durationSeconds ?? 0) - english.durationSeconds)).toBeLessThanOrEqual(0.1);
    // The words at a normal speaking rate (120-220 words per minute).
    const words = AD.split(/\s+/).length;
    expect(english.durationSeconds).toBeGreaterThan(5);
    expect(english.durationSeconds).toBeGreaterThan((words / 220) * 60);
    expect(english.durationSeconds).toBeLessThan((words / 120) * 60);
  });

  it('sounds like speech: loud enough, mostly voiced, with pauses between phrases', async () => {
    const shape = speechShape(await samples(english.bytes));
    expect(shape.rmsDb).toBeGreaterThan(-35);
    expect(shape.active).toBeGreaterThan(0.5);
    expect(shape.active).toBeLessThan(0.97);
    // Eight commas and full stops: at least four clear gaps.
    expect(shape.pauses).toBeGreaterThanOrEqual(4);
  });

  it('speaks differently in another language, and a female variant higher', async () => {
    const [again, german, britishMale, britishFemale] = await Promise.all([
      synthesize({ text: AD, voice: { language: 'en-us' } }),
      synthesize({ text: AD, voice: { language: 'de' } }),
      synthesize({ text: AD, voice: { language: 'en-gb' } }),
      // en-gb is an alias in eSpeak whose "+variant" was silently ignored before espeakVoiceName.
      synthesize({ text: AD, voice: { language: 'en-gb', variant: 'f3' } }),
    ]);
    const [en, en2, de, male, female] = await Promise.all(
      [english, again, german, britishMale, britishFemale].map((a) => samples(a.bytes)),
    );
    // eSpeak is deterministic: the same voice gives the same loudness contour, another language not.
    expect(correlation(envelope(en as Float32Array), envelope(en2 as Float32Array))).toBeGreaterThan(0.99);
    expect(german.bytes.equals(english.bytes)).toBe(false);
    expect(correlation(envelope(en as Float32Array), envelope(de as Float32Array))).toBeLessThan(0.8);
    const [low, high] = [medianPitch(male as Float32Array), medianPitch(female as Float32Array)];
    expect(low).toBeGreaterThan(70);
    expect(low).toBeLessThan(160);
    expect(high / low).toBeGreaterThan(1.5);
  });

  it('speaks faster with a higher speed', async () => {
    const fast = await synthesize({ text: AD, voice: { language: 'en-us', speed: 1.5 } });
    expect(fast.durationSeconds / english.durationSeconds).toBeGreaterThan(0.55);
    expect(fast.durationSeconds / english.durationSeconds).toBeLessThan(0.8);
  });

  it('refuses what it cannot speak with a permanent EngineError', async () => {
    const bad = [
      { text: '  \n ', voice: { language: 'en-us' } },
      { text: 'x'.repeat(5001), voice: { language: 'en-us' } },
      { text: 'hello', voice: { language: 'xx' } },
      { text: 'hello', voice: { language: 'en-us', variant: 'klatt' } },
      { text: 'hello', voice: { language: 'en-us', speed: 3 } },
      { text: 'hello', voice: { language: 'en-us', pitch: Number.NaN } },
    ];
    for (const req of bad) {
      const err = await rejection(synthesize(req));
      expect(err).toBeInstanceOf(EngineError);
      expect((err as EngineError).transient).toBe(false);
    }
  });

  it('kills the synthesizer on abort and on timeout', async () => {
    const long = AD.repeat(19); // under the 5000-character limit, over a second of work
    const controller = new AbortController();
    const aborted = rejection(synthesize({ text: long, voice: { language: 'en-us' }, signal: controller.signal }));
    for (let i = 0; i < 100 && (await synthesizerChildren()).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await synthesizerChildren()).toHaveLength(1);
    const reason = new Error('caller went away');
    controller.abort(reason);
    expect(await aborted).toBe(reason);
    expect(await synthesizerChildren()).toEqual([]);

    const late = await rejection(synthesize({ text: long, voice: { language: 'en-us' }, timeoutMs: 150 }));
    expect(late).toBeInstanceOf(EngineError);
    expect((late as EngineError).message).toBe('making the speech took too long');
    expect(await synthesizerChildren()).toEqual([]);
  });
});

describe('speech to speech', () => {
  it('moves a 440 Hz tone by the chosen semitones and keeps its length', async () => {
    expect(await audioDuration(sine)).toBeCloseTo(3, 2);
    const up = await convertVoice({ input: sine, target: { pitchSemitones: 5 } });
    expect(up.mime).toBe('audio/mpeg');
    const info = await probeMedia(up.bytes);
    expect(info.audioCodec).toBe('mp3');
    expect(Math.abs(up.durationSeconds - 3)).toBeLessThanOrEqual(0.1);
    expect(Math.abs((info.durationSeconds ?? 0) - up.durationSeconds)).toBeLessThanOrEqual(0.1);
    // 440 * 2^(5/12) = 587.3 Hz.
    expect(Math.abs(dominantFrequency(await samples(up.bytes)) - 587.3)).toBeLessThan(4);
  });

  it('moves the pitch without the rubberband filter too (asetrate + atempo)', async () => {
    const out = path.join(tmp, 'fallback.mp3');
    await fs.writeFile(path.join(tmp, 'fallback.wav'), sine);
    await runFfmpeg(['-i', path.join(tmp, 'fallback.wav'), '-af', voiceFilters({ pitchSemitones: -7 }, 3, false), out]);
    const bytes = await fs.readFile(out);
    expect(Math.abs(((await probeMedia(bytes)).durationSeconds ?? 0) - 3)).toBeLessThanOrEqual(0.1);
    // 440 * 2^(-7/12) = 293.7 Hz.
    expect(Math.abs(dominantFrequency(await samples(bytes)) - 293.7)).toBeLessThan(4);
  });

  it('lowers a spoken voice (pitch and formants) and keeps its length and pauses', async () => {
    const deeper = await convertVoice({ input: english.bytes, target: { pitchSemitones: -4, formantSemitones: -2, warmth: 0.5 } });
    expect(Math.abs(deeper.durationSeconds - english.durationSeconds)).toBeLessThanOrEqual(0.1);
    const [before, after] = await Promise.all([samples(english.bytes), samples(deeper.bytes)]);
    // 2^(-4/12) = 0.79.
    const ratio = medianPitch(after) / medianPitch(before);
    expect(ratio).toBeGreaterThan(0.72);
    expect(ratio).toBeLessThan(0.86);
    expect(speechShape(after).pauses).toBeGreaterThanOrEqual(4);
  });

  it('refuses input that is not audio, and targets out of range', async () => {
    const png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#336699' } }).png().toBuffer();
    for (const input of [png, Buffer.from('this is a text file, not a recording\n')]) {
      for (const call of [() => convertVoice({ input, target: { pitchSemitones: 3 } }), () => audioDuration(input)]) {
        const err = await rejection(call());
        expect(err).toBeInstanceOf(EngineError);
        // Neither is a container taken as audio: refused by name before ffprobe sees it.
        expect((err as EngineError).message).toBe('the input audio is not a file we take: MP3, WAV, Ogg, FLAC, M4A, MP4, MOV, WebM or Matroska');
        expect((err as EngineError).transient).toBe(false);
      }
    }
    const far = await rejection(convertVoice({ input: sine, target: { pitchSemitones: 24 } }));
    expect(far).toBeInstanceOf(EngineError);
    expect((far as EngineError).transient).toBe(false);
  });
});
