import type { Cue } from './captions.ts';

/*
 * A PLACEHOLDER voice, not speech: there is no text-to-speech on this machine yet (a later
 * issue brings a real synthesizer). It is a voiced buzz shaped like speech so a talking-avatar
 * video sounds like talking and its audio can be checked: one vowel-coloured syllable per
 * vowel group of the caption phrase, a falling pitch over each phrase, a short noise burst for
 * the consonant, and silence between phrases. Rendered in JS (a few ms per second of audio).
 */

const SAMPLE_RATE = 24_000;
const TABLE = 1024;
const BASE_F0 = 125;

// First three formants (Hz) of the cardinal vowels; enough to make syllables sound different.
const FORMANTS: Record<string, [number, number, number]> = {
  a: [730, 1090, 2440],
  e: [530, 1840, 2480],
  i: [270, 2290, 3010],
  o: [570, 840, 2410],
  u: [300, 870, 2240],
};

const tables = new Map<string, Float32Array>();

/** One pitch period of a glottal-like pulse filtered by the vowel's formants. */
function vowelTable(vowel: string): Float32Array {
  const cached = tables.get(vowel);
  if (cached) return cached;
  const [f1, f2, f3] = FORMANTS[vowel] ?? FORMANTS.a ?? [730, 1090, 2440];
  const gain = (f: number) =>
    1 / (1 + ((f - f1) / 90) ** 2) + 0.6 / (1 + ((f - f2) / 110) ** 2) + 0.3 / (1 + ((f - f3) / 140) ** 2) + 0.02;
  const table = new Float32Array(TABLE);
  for (let k = 1; k * BASE_F0 < 4000; k++) {
    const a = gain(k * BASE_F0) / k;
    for (let i = 0; i < TABLE; i++) table[i] = (table[i] ?? 0) + a * Math.sin((2 * Math.PI * k * i) / TABLE);
  }
  let peak = 0;
  for (const v of table) peak = Math.max(peak, Math.abs(v));
  for (let i = 0; i < TABLE; i++) table[i] = (table[i] ?? 0) / (peak || 1);
  tables.set(vowel, table);
  return table;
}

/** Vowel letters of each syllable, e.g. "summer sale" -> ["u", "e", "a", "e"]. */
function syllables(text: string): string[] {
  const groups = text.toLowerCase().match(/[aeiouy]+/g) ?? [];
  const vowels = groups.map((g) => (g[0] === 'y' ? 'i' : (g[0] ?? 'a')));
  return vowels.length ? vowels : ['a'];
}

/** A mono 16-bit WAV of `duration` seconds with a syllable train during each cue. */
export function synthesizeSpeech(cues: Cue[], duration: number): Buffer {
  const n = Math.max(1, Math.round(duration * SAMPLE_RATE));
  const out = new Float32Array(n);
  let seed = 12345;
  const noise = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 31 - 1;
  };
  for (const cue of cues) {
    const sylls = syllables(cue.text);
    const span = Math.max(0.05, cue.end - cue.start - 0.12);
    const each = span / sylls.length;
    for (const [j, vowel] of sylls.entries()) {
      const table = vowelTable(vowel);
      const start = Math.round((cue.start + j * each) * SAMPLE_RATE);
      const len = Math.round(each * 0.85 * SAMPLE_RATE);
      // Declination: pitch falls across the phrase, with a little per-syllable wobble.
      const f0 = BASE_F0 * (1.12 - 0.22 * (j / sylls.length)) * (1 + 0.05 * Math.sin(j * 2.3));
      let phase = 0;
      for (let i = 0; i < len && start + i < n; i++) {
        const x = i / len;
        const env = Math.sin(Math.PI * Math.min(1, x * 1.6)) ** 2 * (x < 0.62 ? 1 : Math.max(0, 1 - (x - 0.62) / 0.38));
        const vibrato = 1 + 0.012 * Math.sin((2 * Math.PI * 5 * i) / SAMPLE_RATE);
        phase = (phase + (f0 * vibrato * TABLE) / SAMPLE_RATE) % TABLE;
        const burst = i < SAMPLE_RATE * 0.03 ? noise() * 0.12 * (1 - i / (SAMPLE_RATE * 0.03)) : 0;
        out[start + i] = (out[start + i] ?? 0) + 0.45 * env * (table[Math.floor(phase)] ?? 0) + burst;
      }
    }
  }
  return wav(out);
}

function wav(samples: Float32Array): Buffer {
  const data = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) data.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples[i] ?? 0)) * 32767), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
