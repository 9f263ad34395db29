import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineAsset, EngineJob, EngineMedia } from '../../src/adapters/engines/render-job.ts';
import { demoBadgeBox } from '../../src/adapters/engines/local/demo-mark.ts';
import { createLocalEngine } from '../../src/adapters/engines/local/local-engine.ts';
import { canRenderText } from '../../src/adapters/engines/local/text.ts';
import { rendered } from '../support/local-render.ts';
import { memoryFile } from '../support/upstream-file.ts';
import { makeMedia } from '../support/media-probe.ts';

// Every video of the built-in engine carries the "DEMO RENDER — not AI" badge in its top-right
// corner, from the first frame to the last: read back from the MP4's frames.

let tmpRoot: string;
let engine: ReturnType<typeof createLocalEngine>;
let white: EngineMedia;
let face: EngineAsset;
let voice: EngineMedia;

beforeAll(async () => {
  tmpRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-demo-mark-test-'));
  engine = createLocalEngine({ tmpRoot });
  const video = await makeMedia(
    ['-f', 'lavfi', '-i', 'color=c=white:size=320x320:rate=25:duration=2', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'],
    'mp4',
  );
  white = memoryFile(video, 'video/mp4');
  voice = memoryFile(await makeMedia(['-f', 'lavfi', '-i', 'sine=frequency=220:duration=2', '-c:a', 'libmp3lame'], 'mp3'), 'audio/mpeg');
  face = { bytes: await sharp({ create: { width: 256, height: 256, channels: 3, background: '#f8f8f8' } }).png().toBuffer(), mime: 'image/png' };
});
afterAll(() => fs.rm(tmpRoot, { recursive: true, force: true }));

function job(over: Partial<EngineJob>): EngineJob {
  return { generationId: '3f1c6a8e-0000-4000-8000-00000000d3m0', operation: 'ai-video', kind: 'video', params: {}, width: 320, height: 320, quantity: 1, prompt: '', referenceImages: [], productImages: [], ...over };
}

/** The frame at `seconds` as a PNG. */
async function frameAt(mp4: Buffer, seconds: number): Promise<Buffer> {
  const file = path.join(tmpRoot, `in-${Math.random().toString(36).slice(2)}.mp4`);
  await fs.writeFile(file, mp4);
  return makeMedia(['-ss', String(seconds), '-i', file, '-frames:v', '1'], 'png');
}

async function meanLuma(png: Buffer, box: { x: number; y: number; w: number; h: number }): Promise<{ mean: number; white: number }> {
  const { data, info } = await sharp(png).extract({ left: box.x, top: box.y, width: box.w, height: box.h }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let sum = 0;
  let bright = 0;
  const n = data.length / info.channels;
  for (let i = 0; i < data.length; i += info.channels) {
    const l = 0.2126 * data[i]! + 0.7152 * data[i + 1]! + 0.0722 * data[i + 2]!;
    sum += l;
    if (l > 200) bright++;
  }
  return { mean: sum / n, white: bright / n };
}

describe('the demo mark on the local engine\'s videos', () => {
  // Functions: the inputs are made in beforeAll, after the tests are collected.
  const cases: Array<[string, () => Partial<EngineJob>]> = [
    ['ai-video (over its zoom and drift)', () => ({ operation: 'ai-video', durationSeconds: 2, brand: { colorPrimary: '#f6f6f6', colorAccent: '#fbfbfb' } as EngineJob['brand'] })],
    ['talking-avatar', () => ({ operation: 'talking-avatar', avatar: face, voiceAudio: voice, script: '' })],
    ['swap-avatar', () => ({ operation: 'swap-avatar', inputVideo: white, avatar: face, durationSeconds: 2 })],
    ['localize', () => ({ operation: 'localize', inputVideo: white, durationSeconds: 2, params: { output_language: 'es' } })],
    ['video-edit', () => ({ operation: 'video-edit', inputVideo: white, params: { language: 'de' } })],
  ];
  for (const [name, over] of cases) {
    it(`${name}: the badge is in the top-right corner of the first and the last frame`, async () => {
      const { files } = await rendered(engine.run(job(over()), new AbortController().signal));
      const box = demoBadgeBox(320, 320);
      for (const t of [0, 1.9]) {
        const frame = await frameAt(files[0]!.bytes, t);
        const inside = await meanLuma(frame, box);
        // The other top corner, the same size, is the bright picture: the badge darkens its corner.
        const elsewhere = await meanLuma(frame, { ...box, x: 0 });
        expect(elsewhere.mean, `${name} at ${t} s`).toBeGreaterThan(150);
        expect(inside.mean, `${name} at ${t} s`).toBeLessThan(elsewhere.mean - 70);
        if (await canRenderText()) expect(inside.white, `${name} at ${t} s: the words`).toBeGreaterThan(0.03);
      }
    }, 60_000);
  }
});
