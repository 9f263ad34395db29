import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runFfmpeg } from '../../src/adapters/engines/ffmpeg.ts';

export interface WavOptions {
  /** Exactly this many samples: the file lasts samples / rate seconds, to the sample. */
  samples: number;
  /** Default 8000 Hz. */
  rate?: number;
  /** A sine tone of this frequency (default 200 Hz, about a speaking voice's fundamental). */
  toneHz?: number;
  /** Pads the file to exactly this many bytes with a RIFF `JUNK` chunk before the sound. */
  padTo?: number;
}

const HEADER = 12 + 8 + 16; // RIFF/WAVE + the fmt chunk
const CHUNK = 8;

/** A 16-bit mono PCM WAV file, built by hand so its length is exact. */
export function wavBytes({ samples, rate = 8000, toneHz = 200, padTo }: WavOptions): Buffer {
  const dataBytes = samples * 2;
  let junk = 0;
  if (padTo !== undefined) {
    junk = padTo - (HEADER + CHUNK + dataBytes) - CHUNK;
    if (junk < 0 || junk % 2 !== 0) throw new Error(`cannot pad a ${samples}-sample WAV to ${padTo} bytes`);
  }
  const out = Buffer.alloc(HEADER + (padTo !== undefined ? CHUNK + junk : 0) + CHUNK + dataBytes);
  let o = 0;
  o += out.write('RIFF', o);
  o = out.writeUInt32LE(out.length - 8, o);
  o += out.write('WAVE', o);
  o += out.write('fmt ', o);
  o = out.writeUInt32LE(16, o);
  o = out.writeUInt16LE(1, o); // PCM
  o = out.writeUInt16LE(1, o); // mono
  o = out.writeUInt32LE(rate, o);
  o = out.writeUInt32LE(rate * 2, o);
  o = out.writeUInt16LE(2, o);
  o = out.writeUInt16LE(16, o);
  if (padTo !== undefined) {
    o += out.write('JUNK', o);
    o = out.writeUInt32LE(junk, o);
    o += junk; // zeros
  }
  o += out.write('data', o);
  o = out.writeUInt32LE(dataBytes, o);
  const step = (2 * Math.PI * toneHz) / rate;
  for (let i = 0; i < samples; i++) o = out.writeInt16LE(Math.round(8000 * Math.sin(step * i)), o);
  if (o !== out.length) throw new Error(`wrote ${o} of ${out.length} bytes`);
  return out;
}

/** A WAV of `seconds` at 8 kHz (seconds * 8000 must be whole). */
export function wavSeconds(seconds: number, opts: Omit<WavOptions, 'samples'> = {}): Buffer {
  const samples = Math.round(seconds * (opts.rate ?? 8000));
  if (Math.abs(samples / (opts.rate ?? 8000) - seconds) > 1e-9) throw new Error(`${seconds} s is not a whole number of samples`);
  return wavBytes({ ...opts, samples });
}

/** Decodes any audio to 44.1 kHz mono 16-bit samples. */
export async function decodePcm(bytes: Buffer): Promise<Int16Array> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-test-pcm-'));
  try {
    await fs.writeFile(path.join(dir, 'in'), bytes);
    await runFfmpeg(['-i', path.join(dir, 'in'), '-f', 's16le', '-ac', '1', '-ar', '44100', path.join(dir, 'out.raw')]);
    const raw = await fs.readFile(path.join(dir, 'out.raw'));
    return new Int16Array(raw.buffer, raw.byteOffset, raw.length / 2);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** The frequency of a (near) pure tone, from upward zero crossings in the middle half of the audio. */
export async function toneFrequency(bytes: Buffer): Promise<number> {
  const pcm = await decodePcm(bytes);
  const from = Math.floor(pcm.length * 0.25);
  const to = Math.floor(pcm.length * 0.75);
  let crossings = 0;
  for (let i = from + 1; i < to; i++) if (pcm[i - 1]! < 0 && pcm[i]! >= 0) crossings++;
  return crossings / ((to - from) / 44_100);
}

/** Semitones from `a` to `b`. */
export const semitones = (a: number, b: number) => 12 * Math.log2(b / a);
