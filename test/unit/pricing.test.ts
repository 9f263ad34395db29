import { describe, expect, it } from 'vitest';
import type { ImageEffort, ImageModel, ImageResolution } from '../../src/domain/generation-types.ts';
import {
  talkingAvatarCreditsForAudio,
  AD_LIBRARY_SCRAPE_CREDITS,
  aiVideoCredits,
  AI_VIDEO_PRICING,
  IMAGE_CREDITS_PER_IMAGE,
  imageCredits,
  imageCreditsPerImage,
  localizeCredits,
  LOCALIZE_CREDITS_PER_SECOND,
  scriptLength,
  speechToSpeechCredits,
  swapAvatarCredits,
  talkingAvatarCredits,
  TEXT_TO_SPEECH_CREDITS,
  VIDEO_EDIT_CREDITS,
} from '../../src/domain/pricing.ts';
import { priceOf } from '../../src/domain/operations.ts';

describe('talking-avatar', () => {
  it.each([
    [0, 20],
    [1, 20],
    [249, 20],
    [250, 20],
    [251, 40],
    [500, 40],
    [501, 60],
    [750, 60],
    [1000, 80],
    [1750, 140],
    [1751, 160],
    [2000, 160],
    [2001, 160],
    [10000, 160],
  ])('%i characters cost %i', (length, credits) => {
    expect(talkingAvatarCredits(length)).toBe(credits);
    expect(priceOf('talking-avatar', { scriptLength: length })).toBe(credits);
  });

  it('counts characters as code points', () => {
    expect(scriptLength('héllo')).toBe(5);
    expect(scriptLength('👋🏽 hi')).toBe(5);
    expect(talkingAvatarCredits(scriptLength('🙂'.repeat(251)))).toBe(40);
  });

  it.each([-1, 1.5, Number.NaN])('refuses a length of %d', (n) => {
    expect(() => talkingAvatarCredits(n)).toThrow(RangeError);
  });
});

describe('talking-avatar from a speech-to-speech voiceover (ours)', () => {
  it('charges 20 per started 15 s of audio, within 20-160', () => {
    for (const [seconds, credits] of [[0.5, 20], [15, 20], [15.01, 40], [30, 40], [30.5, 60], [119.9, 160], [120, 160], [600, 160]] as const) {
      expect(talkingAvatarCreditsForAudio(seconds), `${seconds} s`).toBe(credits);
    }
  });
  it('refuses a duration that is not one', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => talkingAvatarCreditsForAudio(bad)).toThrow();
  });
});

describe('swap-avatar', () => {
  it.each([
    ['standard', 1, 1],
    ['standard', 30, 30],
    ['pro', 1, 2],
    ['pro', 30, 60],
    ['standard', 12, 12],
    ['pro', 12, 24],
  ] as const)('%s for %i s costs %i', (mode, seconds, credits) => {
    expect(swapAvatarCredits(mode, seconds)).toBe(credits);
    expect(priceOf('swap-avatar', { mode, duration: seconds })).toBe(credits);
  });

  it('charges a fractional second as a started second', () => {
    expect(swapAvatarCredits('standard', 1.2)).toBe(2);
    expect(swapAvatarCredits('pro', 1.2)).toBe(4);
    expect(swapAvatarCredits('pro', 29.01)).toBe(60);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('refuses %d seconds', (s) => {
    expect(() => swapAvatarCredits('pro', s)).toThrow(RangeError);
  });
});

describe('fixed prices', () => {
  it('video edit costs 2', () => {
    expect(VIDEO_EDIT_CREDITS).toBe(2);
    expect(priceOf('video-edit', {})).toBe(2);
  });

  it('text-to-speech costs 1', () => {
    expect(TEXT_TO_SPEECH_CREDITS).toBe(1);
  });

  it('an ad-library scrape costs 10', () => {
    expect(AD_LIBRARY_SCRAPE_CREDITS).toBe(10);
  });
});

describe('speech-to-speech', () => {
  it.each([
    [0, 1],
    [1, 1],
    [29, 1],
    [29.9, 1],
    [30, 2],
    [59, 2],
    [59.9, 2],
    [60, 3],
    [89, 3],
    [89.9, 3],
    [90, 4],
    [119, 4],
    [119.9, 4],
    [120, 4],
  ])('%d s costs %i', (seconds, credits) => {
    expect(speechToSpeechCredits(seconds)).toBe(credits);
  });

  it.each([120.1, 121, 3600])('%d s has no price', (seconds) => {
    expect(speechToSpeechCredits(seconds)).toBeNull();
  });

  it('refuses a negative duration', () => {
    expect(() => speechToSpeechCredits(-1)).toThrow(RangeError);
  });
});

describe('images', () => {
  // The spec's "Image credits per image" table, row by row.
  const rows: [ImageModel, ImageEffort[], [number, number, number]][] = [
    ['fast', [], [1, 2, 2]],
    ['pro', [], [2, 2, 4]],
    ['gpt-2', ['low'], [1, 1, 1]],
    ['gpt-2', ['medium'], [2, 2, 2]],
    ['gpt-2', ['high'], [4, 5, 7]],
    ['gpt-2.5', ['low', 'medium'], [1, 1, 1]],
    ['gpt-2.5', ['high'], [1, 2, 3]],
    ['gpt-2.5', ['xhigh'], [2, 3, 4]],
    ['gpt-2.5', ['max'], [3, 6, 10]],
  ];
  const RES: ImageResolution[] = ['1k', '2k', '4k'];
  const cells = rows.flatMap(([model, efforts, prices]) =>
    (efforts.length ? efforts : [undefined]).flatMap((effort) =>
      RES.map((res, i) => [model, effort, res, prices[i]!] as const),
    ),
  );

  it('covers all 27 cells of the table (30 with gpt-2.5 low and medium apart)', () => {
    expect(rows.length * 3).toBe(27);
    expect(cells).toHaveLength(30);
  });

  it.each(cells)('%s/%s/%s costs %i per image, times quantity', (model, effort, res, price) => {
    expect(imageCreditsPerImage(model, effort, res)).toBe(price);
    for (const quantity of [1, 3, 8]) {
      const params = { model, effort, resolution: res, quantity };
      expect(imageCredits(params)).toBe(price * quantity);
      expect(priceOf('text-to-image', params)).toBe(price * quantity);
      expect(priceOf('product-shots', params)).toBe(price * quantity);
      expect(priceOf('image-edit', params)).toBe(price * quantity);
    }
  });

  it('matches the table constant', () => {
    expect(IMAGE_CREDITS_PER_IMAGE.pro['4k']).toBe(4);
    expect(IMAGE_CREDITS_PER_IMAGE['gpt-2.5'].max['4k']).toBe(10);
  });

  it("prices the spec's example: 4 images, pro, 4k = 16", () => {
    expect(imageCredits({ model: 'pro', resolution: '4k', quantity: 4 })).toBe(16);
  });

  it('ignores effort on fast and pro', () => {
    for (const effort of ['low', 'medium', 'high', 'xhigh', 'max'] as const) {
      expect(imageCreditsPerImage('fast', effort, '2k')).toBe(2);
      expect(imageCreditsPerImage('pro', effort, '4k')).toBe(4);
    }
  });

  it('defaults GPT effort to medium', () => {
    expect(imageCreditsPerImage('gpt-2', undefined, '1k')).toBe(2);
    expect(imageCreditsPerImage('gpt-2.5', undefined, '4k')).toBe(1);
  });

  it('throws on an effort gpt-2 does not have', () => {
    expect(() => imageCreditsPerImage('gpt-2', 'xhigh', '1k')).toThrow(RangeError);
    expect(() => imageCreditsPerImage('gpt-2', 'max', '1k')).toThrow(RangeError);
  });

  it.each([0, -1, 1.5])('throws on quantity %d', (quantity) => {
    expect(() => imageCredits({ model: 'fast', resolution: '1k', quantity })).toThrow(RangeError);
  });
});

describe('ai-video (our prices)', () => {
  it('has a per-second rate for every model', () => {
    expect(AI_VIDEO_PRICING.creditsPerSecond).toEqual({
      'sora-2': 4,
      'sora-2-pro': 10,
      'veo-3.1': 8,
      'veo-3.1-fast': 4,
      'kling-2.6': 3,
      'kling-o3': 5,
      'seedance-2.0': 3,
      'seedance-2.0-fast': 2,
      'seedance-2.0-frames': 3,
      'seedance-2.0-frames-fast': 2,
    });
  });

  it.each([
    ['sora-2 8 s', { model: 'sora-2', duration: 8, resolution: '720p' }, 32],
    ['sora-2 8 s hd', { model: 'sora-2', duration: 8, resolution: '720p', hd: true }, 48],
    ['sora-2-pro 20 s 1080p hd', { model: 'sora-2-pro', duration: 20, resolution: '1080p', hd: true }, 450],
    ['sora-2-pro 4 s', { model: 'sora-2-pro', duration: 4, resolution: '720p' }, 40],
    ['veo-3.1 8 s 4k', { model: 'veo-3.1', duration: 8, resolution: '4k' }, 128],
    ['veo-3.1 hd is not a Sora multiplier', { model: 'veo-3.1', duration: 4, resolution: '720p', hd: true }, 32],
    ['veo-3.1-fast 6 s 1080p', { model: 'veo-3.1-fast', duration: 6, resolution: '1080p' }, 36],
    ['kling-2.6 5 s', { model: 'kling-2.6', duration: 5, resolution: '720p' }, 15],
    ['kling-2.6 quality is ignored', { model: 'kling-2.6', duration: 5, resolution: '720p', quality: '4k' }, 15],
    ['kling-o3 3 s default pro', { model: 'kling-o3', duration: 3, resolution: '720p' }, 15],
    ['kling-o3 5 s standard', { model: 'kling-o3', duration: 5, resolution: '720p', quality: 'standard' }, 20],
    ['kling-o3 3 s standard', { model: 'kling-o3', duration: 3, resolution: '720p', quality: 'standard' }, 12],
    ['kling-o3 15 s 4k 1080p', { model: 'kling-o3', duration: 15, resolution: '1080p', quality: '4k' }, 225],
    ['seedance-2.0 4 s 480p', { model: 'seedance-2.0', duration: 4, resolution: '480p' }, 9],
    ['seedance-2.0-fast 5 s 480p (7.5 up)', { model: 'seedance-2.0-fast', duration: 5, resolution: '480p' }, 8],
    ['seedance-2.0-frames 15 s 1080p', { model: 'seedance-2.0-frames', duration: 15, resolution: '1080p' }, 68],
    ['seedance-2.0-frames-fast 7 s', { model: 'seedance-2.0-frames-fast', duration: 7, resolution: '720p' }, 14],
  ] as const)('%s costs %i', (_name, params, credits) => {
    expect(aiVideoCredits(params)).toBe(credits);
    expect(priceOf('ai-video', params)).toBe(credits);
  });

  it('never charges less than 1', () => {
    expect(aiVideoCredits({ model: 'seedance-2.0-fast', duration: 0, resolution: '480p' })).toBe(1);
  });
});

describe('localize (our prices)', () => {
  it('rates', () => {
    expect(LOCALIZE_CREDITS_PER_SECOND).toEqual({ speed: 1, precision: 2 });
  });

  it.each([
    ['speed', 1, 1],
    ['speed', 120, 120],
    ['speed', 10.2, 11],
    ['precision', 1, 2],
    ['precision', 60, 120],
    ['precision', 120, 240],
    ['precision', 0.5, 2],
  ] as const)('%s for %d s costs %i', (mode, seconds, credits) => {
    expect(localizeCredits(mode, seconds)).toBe(credits);
    expect(priceOf('localize', { mode, duration: seconds })).toBe(credits);
  });
});
