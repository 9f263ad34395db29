import { describe, expect, it } from 'vitest';
import { parseAspectRatio } from '../../src/domain/aspect-ratio.ts';
import { VIDEO_MODELS } from '../../src/domain/generation-types.ts';
import type { VideoModel } from '../../src/domain/generation-types.ts';
import {
  allowsAspectRatio,
  allowsDuration,
  allowsResolution,
  describeAspectRatios,
  describeDurations,
  frameSize,
  VIDEO_MODEL_TABLE,
  VIDEO_RESOLUTIONS,
  videoModel,
} from '../../src/domain/video-models.ts';

const SORA: VideoModel[] = ['sora-2', 'sora-2-pro'];
const VEO: VideoModel[] = ['veo-3.1', 'veo-3.1-fast'];
const SEEDANCE: VideoModel[] = ['seedance-2.0', 'seedance-2.0-fast', 'seedance-2.0-frames', 'seedance-2.0-frames-fast'];
const SEEDANCE_RATIOS = ['auto', '21:9', '16:9', '4:3', '1:1', '3:4', '9:16'];

describe('parseAspectRatio', () => {
  it.each([
    ['16:9', 16, 9],
    ['9:16', 9, 16],
    ['1:1', 1, 1],
    ['4:5', 4, 5],
    ['21:9', 21, 9],
    ['100:1', 100, 1],
    ['1:100', 1, 100],
    ['100:100', 100, 100],
  ])('reads %s', (text, width, height) => {
    expect(parseAspectRatio(text)).toEqual({ width, height });
  });

  it.each(['auto', '', '16', '16:', ':9', '0:1', '1:0', '101:1', '1:101', '016:9', '16:09', '1.5:1', '16 : 9', ' 16:9', '16/9', '-16:9', '16:9:1', '1000:1'])(
    'refuses %j',
    (text) => {
      expect(parseAspectRatio(text)).toBeNull();
    },
  );
});

describe('VIDEO_MODEL_TABLE', () => {
  it('has a row for every video model and nothing else', () => {
    expect(Object.keys(VIDEO_MODEL_TABLE).sort()).toEqual([...VIDEO_MODELS].sort());
    for (const m of VIDEO_MODELS) expect(videoModel(m)).toBe(VIDEO_MODEL_TABLE[m]);
  });

  it('lists the aspect ratios of the spec', () => {
    for (const m of SORA) expect(VIDEO_MODEL_TABLE[m].aspectRatios).toEqual(['16:9', '9:16']);
    for (const m of VEO) expect(VIDEO_MODEL_TABLE[m].aspectRatios).toBe('any');
    expect(VIDEO_MODEL_TABLE['kling-2.6'].aspectRatios).toBe('any');
    expect(VIDEO_MODEL_TABLE['kling-o3'].aspectRatios).toEqual(['16:9', '9:16', '1:1']);
    for (const m of SEEDANCE) expect(VIDEO_MODEL_TABLE[m].aspectRatios).toEqual(SEEDANCE_RATIOS);
  });

  it('lists the durations of the spec', () => {
    for (const m of SORA) expect(VIDEO_MODEL_TABLE[m].durations).toEqual({ kind: 'list', values: [4, 8, 12, 16, 20] });
    for (const m of VEO) expect(VIDEO_MODEL_TABLE[m].durations).toEqual({ kind: 'list', values: [4, 6, 8] });
    expect(VIDEO_MODEL_TABLE['kling-2.6'].durations).toEqual({ kind: 'list', values: [5, 10] });
    expect(VIDEO_MODEL_TABLE['kling-o3'].durations).toEqual({ kind: 'range', min: 3, max: 15 });
    for (const m of SEEDANCE) expect(VIDEO_MODEL_TABLE[m].durations).toEqual({ kind: 'range', min: 4, max: 15 });
  });

  it('lists resolutions with a default that is one of them', () => {
    const expected: Record<VideoModel, string[]> = {
      'sora-2': ['720p'],
      'sora-2-pro': ['720p', '1080p'],
      'veo-3.1': ['720p', '1080p', '4k'],
      'veo-3.1-fast': ['720p', '1080p', '4k'],
      'kling-2.6': ['720p', '1080p'],
      'kling-o3': ['720p', '1080p'],
      'seedance-2.0': ['480p', '720p', '1080p'],
      'seedance-2.0-fast': ['480p', '720p'],
      'seedance-2.0-frames': ['480p', '720p', '1080p'],
      'seedance-2.0-frames-fast': ['480p', '720p'],
    };
    for (const m of VIDEO_MODELS) {
      expect(VIDEO_MODEL_TABLE[m].resolutions, m).toEqual(expected[m]);
      expect(VIDEO_MODEL_TABLE[m].defaultResolution, m).toBe('720p');
    }
  });

  it('sets the capability flags', () => {
    const flags = (pick: (s: (typeof VIDEO_MODEL_TABLE)[VideoModel]) => unknown) =>
      Object.fromEntries(VIDEO_MODELS.map((m) => [m, pick(VIDEO_MODEL_TABLE[m])]));
    const only = (yes: VideoModel[], y: unknown = true, n: unknown = false) =>
      Object.fromEntries(VIDEO_MODELS.map((m) => [m, yes.includes(m) ? y : n]));
    expect(flags((s) => s.hd)).toEqual(only(SORA));
    expect(flags((s) => s.takesQuality)).toEqual(only(['kling-o3']));
    expect(flags((s) => s.takesFrames)).toEqual(
      only([...VEO, 'kling-o3', 'seedance-2.0-frames', 'seedance-2.0-frames-fast']),
    );
    expect(flags((s) => s.requiresFirstFrame)).toEqual(only(['seedance-2.0-frames', 'seedance-2.0-frames-fast']));
    expect(flags((s) => s.maxReferenceImages)).toEqual(only(['kling-o3', ...SEEDANCE], 4, 0));
    expect(flags((s) => s.usesBrandAndProducts)).toEqual(only(['kling-o3', ...SEEDANCE]));
    expect(flags((s) => s.defaultGenerateAudio)).toEqual(only(['kling-o3']));
  });
});

describe('allowsAspectRatio', () => {
  it.each(SORA)('%s takes 16:9 and 9:16 only', (m) => {
    expect(allowsAspectRatio(m, '16:9')).toBe(true);
    expect(allowsAspectRatio(m, '9:16')).toBe(true);
    for (const r of ['1:1', '4:3', '21:9', 'auto', '4:5']) expect(allowsAspectRatio(m, r), r).toBe(false);
  });

  it.each([...VEO, 'kling-2.6' as const])('%s takes any W:H up to 100 but not auto', (m) => {
    for (const r of ['16:9', '9:16', '1:1', '4:5', '21:9', '100:1', '7:3']) expect(allowsAspectRatio(m, r), r).toBe(true);
    for (const r of ['auto', '0:1', '101:1', '16/9', 'wide', '']) expect(allowsAspectRatio(m, r), r).toBe(false);
  });

  it('kling-o3 takes 16:9, 9:16 and 1:1 only', () => {
    for (const r of ['16:9', '9:16', '1:1']) expect(allowsAspectRatio('kling-o3', r), r).toBe(true);
    for (const r of ['4:3', '21:9', 'auto', '4:5']) expect(allowsAspectRatio('kling-o3', r), r).toBe(false);
  });

  it.each(SEEDANCE)('%s takes its seven ratios including auto', (m) => {
    for (const r of SEEDANCE_RATIOS) expect(allowsAspectRatio(m, r), r).toBe(true);
    for (const r of ['4:5', '5:4', '2:1', '9:21', '32:18']) expect(allowsAspectRatio(m, r), r).toBe(false);
  });
});

describe('allowsDuration', () => {
  it.each(SORA)('%s: 4, 8, 12, 16, 20', (m) => {
    for (const d of [4, 8, 12, 16, 20]) expect(allowsDuration(m, d), String(d)).toBe(true);
    for (const d of [0, 3, 5, 6, 10, 24, 8.5, -4]) expect(allowsDuration(m, d), String(d)).toBe(false);
  });

  it.each(VEO)('%s: 4, 6, 8', (m) => {
    for (const d of [4, 6, 8]) expect(allowsDuration(m, d), String(d)).toBe(true);
    for (const d of [3, 5, 7, 9, 10, 4.5]) expect(allowsDuration(m, d), String(d)).toBe(false);
  });

  it('kling-2.6: 5, 10', () => {
    for (const d of [5, 10]) expect(allowsDuration('kling-2.6', d), String(d)).toBe(true);
    for (const d of [4, 6, 9, 11, 7.5]) expect(allowsDuration('kling-2.6', d), String(d)).toBe(false);
  });

  it('kling-o3: any whole number 3-15', () => {
    for (let d = 3; d <= 15; d++) expect(allowsDuration('kling-o3', d), String(d)).toBe(true);
    for (const d of [2, 16, 3.5, 0, -3]) expect(allowsDuration('kling-o3', d), String(d)).toBe(false);
  });

  it.each(SEEDANCE)('%s: any whole number 4-15', (m) => {
    for (let d = 4; d <= 15; d++) expect(allowsDuration(m, d), String(d)).toBe(true);
    for (const d of [3, 16, 4.5, 14.9]) expect(allowsDuration(m, d), String(d)).toBe(false);
  });
});

describe('allowsResolution', () => {
  it('follows the table', () => {
    for (const m of VIDEO_MODELS) {
      for (const r of VIDEO_RESOLUTIONS) {
        expect(allowsResolution(m, r), `${m} ${r}`).toBe(VIDEO_MODEL_TABLE[m].resolutions.includes(r));
      }
      expect(allowsResolution(m, '720P')).toBe(false);
      expect(allowsResolution(m, '8k')).toBe(false);
    }
  });

  it('refuses 1080p on the -fast seedance variants only', () => {
    expect(allowsResolution('seedance-2.0', '1080p')).toBe(true);
    expect(allowsResolution('seedance-2.0-frames', '1080p')).toBe(true);
    expect(allowsResolution('seedance-2.0-fast', '1080p')).toBe(false);
    expect(allowsResolution('seedance-2.0-frames-fast', '1080p')).toBe(false);
  });
});

describe('describe*', () => {
  it('words the aspect ratios', () => {
    expect(describeAspectRatios('sora-2')).toBe('16:9 or 9:16');
    expect(describeAspectRatios('kling-o3')).toBe('16:9, 9:16 or 1:1');
    expect(describeAspectRatios('seedance-2.0')).toBe('auto, 21:9, 16:9, 4:3, 1:1, 3:4 or 9:16');
    expect(describeAspectRatios('veo-3.1')).toBe('a ratio W:H of whole numbers from 1 to 100, e.g. 16:9 or 4:5');
  });

  it('words the durations', () => {
    expect(describeDurations('sora-2')).toBe('4, 8, 12, 16 or 20 seconds');
    expect(describeDurations('veo-3.1-fast')).toBe('4, 6 or 8 seconds');
    expect(describeDurations('kling-2.6')).toBe('5 or 10 seconds');
    expect(describeDurations('kling-o3')).toBe('a whole number of seconds from 3 to 15');
    expect(describeDurations('seedance-2.0-fast')).toBe('a whole number of seconds from 4 to 15');
  });
});

describe('frameSize', () => {
  it.each([
    ['16:9', '720p', 1280, 720],
    ['9:16', '720p', 720, 1280],
    ['1:1', '720p', 720, 720],
    ['16:9', '1080p', 1920, 1080],
    ['9:16', '1080p', 1080, 1920],
    ['16:9', '4k', 3840, 2160],
    ['16:9', '480p', 854, 480],
    ['9:16', '480p', 480, 854],
    ['auto', '720p', 1280, 720],
    ['auto', '480p', 854, 480],
    ['21:9', '720p', 1680, 720],
    ['4:3', '1080p', 1440, 1080],
    ['3:4', '480p', 480, 640],
    ['4:5', '1080p', 1080, 1350],
    ['100:1', '480p', 48000, 480],
  ] as const)('%s at %s is %ix%i', (ratio, res, width, height) => {
    expect(frameSize(ratio, res)).toEqual({ width, height });
  });

  it('always gives even sides', () => {
    for (const ratio of ['7:3', '5:3', '21:9', '3:7', '13:11', '99:100']) {
      for (const res of VIDEO_RESOLUTIONS) {
        const { width, height } = frameSize(ratio, res);
        expect(width % 2, `${ratio} ${res}`).toBe(0);
        expect(height % 2, `${ratio} ${res}`).toBe(0);
      }
    }
  });

  it('throws on something that is not a ratio', () => {
    expect(() => frameSize('wide', '720p')).toThrow(RangeError);
  });
});
