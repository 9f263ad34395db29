import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import { GENERATION_MAX } from '../../src/domain/generation-fields.ts';
import { checkReferenceImageTotal, imageEditInput, imageSize, productShotsInput, textToImageInput } from '../../src/domain/image-inputs.ts';
import { aiVideoInput, localizeInput, swapAvatarInput, talkingAvatarInput, videoEditInput } from '../../src/domain/video-inputs.ts';
import { VIDEO_MODELS } from '../../src/domain/generation-types.ts';
import type { VideoModel } from '../../src/domain/generation-types.ts';
import { parseInput } from '../../src/domain/validate.ts';
import { VIDEO_MODEL_TABLE } from '../../src/domain/video-models.ts';

function refusal(schema: z.ZodType, input: unknown): AppError {
  let result: unknown;
  try {
    result = parseInput(schema, input);
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error(`expected validation_error, but the input was accepted as ${JSON.stringify(result)}`);
}

/** Asserts a 400 validation_error naming `field`; `message` (exact string or pattern) checks the rest. */
function expectRefused(schema: z.ZodType, input: unknown, field: string, message?: string | RegExp): AppError {
  const e = refusal(schema, input);
  expect(e.code).toBe('validation_error');
  expect(e.status).toBe(400);
  expect(e.message.startsWith(`${field}: `), `message ${JSON.stringify(e.message)} should name ${field}`).toBe(true);
  if (typeof message === 'string') expect(e.message).toBe(`${field}: ${message}`);
  else if (message) expect(e.message).toMatch(message);
  return e;
}

const parse = <S extends z.ZodType>(schema: S, input: unknown): z.output<S> => parseInput(schema, input);

const U1 = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
const U2 = '6f1c2b8e-3d4a-4b5c-8d9e-0f1a2b3c4d5e';
const U3 = '123e4567-e89b-42d3-a456-426614174000';
const U4 = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';
const URL_A = 'https://cdn.example.com/a.png';
const urls = (n: number) => Array.from({ length: n }, (_, i) => `https://cdn.example.com/${i}.png`);
const chars = (n: number, c = 'a') => c.repeat(n);

// ---- talking-avatar ------------------------------------------------------------------------------------------------

describe('talkingAvatarInput', () => {
  const withScript = { avatar_id: U1, avatar_type: 'platform', script: 'Hello there', voice_id: 'voice-1' };
  const withVoiceover = { avatar_id: U1, avatar_type: 'custom', voiceover_id: U2 };

  it('takes a script and a voice, default lipsync model', () => {
    expect(parse(talkingAvatarInput, withScript)).toEqual({
      avatar_id: U1,
      avatar_type: 'platform',
      lipsync_model: 'heygen-avatar4',
      script: 'Hello there',
      voice_id: 'voice-1',
    });
  });

  it('takes a voiceover alone', () => {
    expect(parse(talkingAvatarInput, withVoiceover)).toEqual({
      avatar_id: U1,
      avatar_type: 'custom',
      lipsync_model: 'heygen-avatar4',
      voiceover_id: U2,
    });
  });

  it('lets the voiceover win over a script and voice', () => {
    const out = parse(talkingAvatarInput, { ...withScript, voiceover_id: U2 });
    expect(out).toEqual({ avatar_id: U1, avatar_type: 'platform', lipsync_model: 'heygen-avatar4', voiceover_id: U2 });
    expect(out.script).toBeUndefined();
  });

  it('needs script and voice_id without a voiceover', () => {
    expectRefused(talkingAvatarInput, { avatar_id: U1, avatar_type: 'platform' }, 'script', 'is required with voice_id, or give voiceover_id');
    expectRefused(talkingAvatarInput, { avatar_id: U1, avatar_type: 'platform', voice_id: 'v' }, 'script', /or give voiceover_id/);
    expectRefused(talkingAvatarInput, { avatar_id: U1, avatar_type: 'platform', script: 'hi' }, 'voice_id', 'is required with script, or give voiceover_id');
    expectRefused(talkingAvatarInput, { ...withScript, voiceover_id: null, voice_id: null }, 'voice_id');
  });

  it.each(['platform', 'custom', 'product'])('takes avatar_type %s', (avatar_type) => {
    expect(parse(talkingAvatarInput, { ...withScript, avatar_type }).avatar_type).toBe(avatar_type);
  });

  it('checks avatar_id and avatar_type', () => {
    expectRefused(talkingAvatarInput, { ...withScript, avatar_id: undefined }, 'avatar_id', 'is required');
    expectRefused(talkingAvatarInput, { ...withScript, avatar_id: 'avatar-1' }, 'avatar_id', 'must be a UUID');
    expectRefused(talkingAvatarInput, { ...withScript, avatar_type: undefined }, 'avatar_type', 'is required');
    expectRefused(talkingAvatarInput, { ...withScript, avatar_type: 'stock' }, 'avatar_type', 'must be one of platform, custom or product');
  });

  it('bounds the script at 5000 characters as sent (the maxLength the document declares), code points, then trims', () => {
    expect(GENERATION_MAX.script).toBe(5000);
    expect(parse(talkingAvatarInput, { ...withScript, script: chars(5000) }).script).toHaveLength(5000);
    expect(parse(talkingAvatarInput, { ...withScript, script: chars(5000, '🙂') }).script).toHaveLength(10000);
    expect(parse(talkingAvatarInput, { ...withScript, script: `  ${chars(4996)}  ` }).script).toBe(chars(4996));
    expectRefused(talkingAvatarInput, { ...withScript, script: `  ${chars(5000)}  ` }, 'script', 'must be at most 5000 characters');
    expectRefused(talkingAvatarInput, { ...withScript, script: chars(5001) }, 'script', 'must be at most 5000 characters');
    expectRefused(talkingAvatarInput, { ...withScript, script: '' }, 'script', 'must not be empty');
    expectRefused(talkingAvatarInput, { ...withScript, script: '   ' }, 'script', 'must not be empty');
    expectRefused(talkingAvatarInput, { ...withScript, script: 42 }, 'script', 'must be a string');
  });

  it('bounds voice_id at 200 characters', () => {
    expect(parse(talkingAvatarInput, { ...withScript, voice_id: chars(200) }).voice_id).toHaveLength(200);
    expectRefused(talkingAvatarInput, { ...withScript, voice_id: chars(201) }, 'voice_id', 'must be at most 200 characters');
    expectRefused(talkingAvatarInput, { ...withScript, voice_id: ' ' }, 'voice_id', 'must not be empty');
  });

  it('checks voiceover_id', () => {
    expectRefused(talkingAvatarInput, { ...withVoiceover, voiceover_id: 'vo-1' }, 'voiceover_id', 'must be a UUID');
  });

  it('takes both lipsync models and nothing else', () => {
    expect(parse(talkingAvatarInput, { ...withScript, lipsync_model: 'lipsync-2.0' }).lipsync_model).toBe('lipsync-2.0');
    expect(parse(talkingAvatarInput, { ...withScript, lipsync_model: 'heygen-avatar4' }).lipsync_model).toBe('heygen-avatar4');
    expect(parse(talkingAvatarInput, { ...withScript, lipsync_model: null }).lipsync_model).toBe('heygen-avatar4');
    expectRefused(talkingAvatarInput, { ...withScript, lipsync_model: 'wav2lip' }, 'lipsync_model', /heygen-avatar4 or lipsync-2\.0/);
  });

  it('lowercases UUIDs and strips unknown fields', () => {
    const out = parse(talkingAvatarInput, { ...withVoiceover, avatar_id: U1.toUpperCase(), voiceover_id: U2.toUpperCase(), extra: 1 });
    expect(out).toEqual({ avatar_id: U1, avatar_type: 'custom', lipsync_model: 'heygen-avatar4', voiceover_id: U2 });
  });
});

// ---- ai-video ------------------------------------------------------------------------------------------------------

const FIRST_DURATION: Record<VideoModel, number> = {
  'sora-2': 4,
  'sora-2-pro': 4,
  'veo-3.1': 4,
  'veo-3.1-fast': 4,
  'kling-2.6': 5,
  'kling-o3': 3,
  'seedance-2.0': 4,
  'seedance-2.0-fast': 4,
  'seedance-2.0-frames': 4,
  'seedance-2.0-frames-fast': 4,
};
const FRAMES_REQUIRED: VideoModel[] = ['seedance-2.0-frames', 'seedance-2.0-frames-fast'];
const SEEDANCE: VideoModel[] = ['seedance-2.0', 'seedance-2.0-fast', 'seedance-2.0-frames', 'seedance-2.0-frames-fast'];

/** A valid body for the model; `over` replaces or adds fields (undefined removes one). */
function video(model: VideoModel, over: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    prompt: 'a cat surfing',
    aspect_ratio: '16:9',
    duration: FIRST_DURATION[model],
    ...(FRAMES_REQUIRED.includes(model) ? { first_frame_image_url: URL_A } : {}),
    ...over,
  };
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  return body;
}

describe('aiVideoInput: aspect ratios', () => {
  const cases: [VideoModel, string[], string[], string][] = [
    ['sora-2', ['16:9', '9:16'], ['1:1', '4:3', 'auto'], '16:9 or 9:16'],
    ['sora-2-pro', ['16:9', '9:16'], ['1:1', '21:9', 'auto'], '16:9 or 9:16'],
    ['veo-3.1', ['16:9', '9:16', '1:1', '4:5', '21:9', '100:1'], ['auto', '101:1', '0:1', 'wide'], 'a ratio W:H of whole numbers from 1 to 100, e.g. 16:9 or 4:5'],
    ['veo-3.1-fast', ['16:9', '4:5', '21:9'], ['auto', '16/9'], 'a ratio W:H of whole numbers from 1 to 100, e.g. 16:9 or 4:5'],
    ['kling-2.6', ['16:9', '9:16', '4:5', '21:9'], ['auto', '1:0', '1.5:1'], 'a ratio W:H of whole numbers from 1 to 100, e.g. 16:9 or 4:5'],
    ['kling-o3', ['16:9', '9:16', '1:1'], ['4:3', '21:9', 'auto'], '16:9, 9:16 or 1:1'],
    ...SEEDANCE.map((m): [VideoModel, string[], string[], string] => [
      m,
      ['auto', '21:9', '16:9', '4:3', '1:1', '3:4', '9:16'],
      ['4:5', '9:21', '2:1'],
      'auto, 21:9, 16:9, 4:3, 1:1, 3:4 or 9:16',
    ]),
  ];

  it('has a case for every model', () => {
    expect(cases.map(([m]) => m).sort()).toEqual([...VIDEO_MODELS].sort());
  });

  describe.each(cases)('%s', (model, allowed, refused, wording) => {
    it.each(allowed)('takes %s', (aspect_ratio) => {
      expect(parse(aiVideoInput, video(model, { aspect_ratio })).aspect_ratio).toBe(aspect_ratio);
    });
    it.each(refused)('refuses %s', (aspect_ratio) => {
      expectRefused(aiVideoInput, video(model, { aspect_ratio }), 'aspect_ratio', `${model} takes ${wording}`);
    });
  });

  it('trims the ratio and requires it', () => {
    expect(parse(aiVideoInput, video('sora-2', { aspect_ratio: ' 9:16 ' })).aspect_ratio).toBe('9:16');
    expectRefused(aiVideoInput, video('sora-2', { aspect_ratio: undefined }), 'aspect_ratio', 'is required');
    expectRefused(aiVideoInput, video('sora-2', { aspect_ratio: 16 }), 'aspect_ratio', 'must be a string');
  });
});

describe('aiVideoInput: durations', () => {
  const cases: [VideoModel, number[], number[], string][] = [
    ['sora-2', [4, 8, 12, 16, 20], [0, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 24, 4.5], '4, 8, 12, 16 or 20 seconds'],
    ['sora-2-pro', [4, 8, 12, 16, 20], [3, 5, 24, 8.5], '4, 8, 12, 16 or 20 seconds'],
    ['veo-3.1', [4, 6, 8], [3, 5, 7, 9, 10, 6.5], '4, 6 or 8 seconds'],
    ['veo-3.1-fast', [4, 6, 8], [3, 5, 7, 9, 4.5], '4, 6 or 8 seconds'],
    ['kling-2.6', [5, 10], [4, 6, 9, 11, 15, 5.5], '5 or 10 seconds'],
    ['kling-o3', [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [2, 16, 3.5, 0, -3], 'a whole number of seconds from 3 to 15'],
    ...SEEDANCE.map((m): [VideoModel, number[], number[], string] => [
      m,
      [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
      [3, 16, 4.5, 0],
      'a whole number of seconds from 4 to 15',
    ]),
  ];

  it('has a case for every model', () => {
    expect(cases.map(([m]) => m).sort()).toEqual([...VIDEO_MODELS].sort());
  });

  describe.each(cases)('%s', (model, allowed, refused, wording) => {
    it.each(allowed)('takes %d s', (duration) => {
      expect(parse(aiVideoInput, video(model, { duration })).duration).toBe(duration);
    });
    it.each(refused)('refuses %d s', (duration) => {
      expectRefused(aiVideoInput, video(model, { duration }), 'duration', `${model} takes ${wording}`);
    });
  });

  it('requires a number', () => {
    expectRefused(aiVideoInput, video('sora-2', { duration: undefined }), 'duration', 'is required');
    expectRefused(aiVideoInput, video('sora-2', { duration: '8' }), 'duration', 'must be a number of seconds');
  });
});

describe('aiVideoInput: resolution', () => {
  it.each(VIDEO_MODELS)('%s defaults to 720p', (model) => {
    expect(parse(aiVideoInput, video(model)).resolution).toBe('720p');
    expect(parse(aiVideoInput, video(model, { resolution: null })).resolution).toBe('720p');
  });

  const cases: [VideoModel, string[], string[], string][] = [
    ['sora-2', ['720p'], ['1080p', '480p', '4k'], '720p'],
    ['sora-2-pro', ['720p', '1080p'], ['480p', '4k'], '720p or 1080p'],
    ['veo-3.1', ['720p', '1080p', '4k'], ['480p'], '720p, 1080p or 4k'],
    ['veo-3.1-fast', ['720p', '1080p', '4k'], ['480p'], '720p, 1080p or 4k'],
    ['kling-2.6', ['720p', '1080p'], ['480p', '4k'], '720p or 1080p'],
    ['kling-o3', ['720p', '1080p'], ['480p', '4k'], '720p or 1080p'],
    ['seedance-2.0', ['480p', '720p', '1080p'], ['4k'], '480p, 720p or 1080p'],
    ['seedance-2.0-frames', ['480p', '720p', '1080p'], ['4k'], '480p, 720p or 1080p'],
    ['seedance-2.0-fast', ['480p', '720p'], ['1080p', '4k'], '480p or 720p'],
    ['seedance-2.0-frames-fast', ['480p', '720p'], ['1080p', '4k'], '480p or 720p'],
  ];

  it('has a case for every model', () => {
    expect(cases.map(([m]) => m).sort()).toEqual([...VIDEO_MODELS].sort());
  });

  describe.each(cases)('%s', (model, allowed, refused, wording) => {
    it.each(allowed)('takes %s', (resolution) => {
      expect(parse(aiVideoInput, video(model, { resolution })).resolution).toBe(resolution);
    });
    it.each([...refused, '1080P', '8k', ''])('refuses %j', (resolution) => {
      expectRefused(aiVideoInput, video(model, { resolution }), 'resolution', `${model} takes ${wording}`);
    });
  });

  it('refuses a non-string', () => {
    expectRefused(aiVideoInput, video('sora-2', { resolution: 720 }), 'resolution', 'must be a string');
  });
});

describe('aiVideoInput: quality', () => {
  it('defaults to pro on kling-o3 and takes standard, pro, 4k', () => {
    expect(parse(aiVideoInput, video('kling-o3')).quality).toBe('pro');
    for (const quality of ['standard', 'pro', '4k']) {
      expect(parse(aiVideoInput, video('kling-o3', { quality })).quality).toBe(quality);
    }
  });

  it.each(VIDEO_MODELS.filter((m) => m !== 'kling-o3'))('is dropped on %s', (model) => {
    const out = parse(aiVideoInput, video(model, { quality: '4k' }));
    expect('quality' in out).toBe(false);
  });

  it('refuses an unknown quality on any model', () => {
    expectRefused(aiVideoInput, video('kling-o3', { quality: 'ultra' }), 'quality', 'must be one of standard, pro or 4k');
    expectRefused(aiVideoInput, video('sora-2', { quality: 'ultra' }), 'quality');
  });
});

describe('aiVideoInput: hd', () => {
  it.each(['sora-2', 'sora-2-pro'] as const)('%s takes hd true and false, default false', (model) => {
    expect(parse(aiVideoInput, video(model, { hd: true })).hd).toBe(true);
    expect(parse(aiVideoInput, video(model, { hd: false })).hd).toBe(false);
    expect(parse(aiVideoInput, video(model)).hd).toBe(false);
  });

  it.each(VIDEO_MODELS.filter((m) => !m.startsWith('sora')))('%s refuses hd true, takes hd false', (model) => {
    expectRefused(aiVideoInput, video(model, { hd: true }), 'hd', `only Sora models (sora-2 and sora-2-pro) take hd; ${model} does not`);
    expect(parse(aiVideoInput, video(model, { hd: false })).hd).toBe(false);
  });

  it('refuses a non-boolean', () => {
    expectRefused(aiVideoInput, video('sora-2', { hd: 'yes' }), 'hd', 'must be true or false');
  });
});

describe('aiVideoInput: generate_audio', () => {
  it.each(VIDEO_MODELS)('%s default', (model) => {
    expect(parse(aiVideoInput, video(model)).generate_audio).toBe(model === 'kling-o3');
  });

  it('can be set either way on any model', () => {
    expect(parse(aiVideoInput, video('kling-o3', { generate_audio: false })).generate_audio).toBe(false);
    expect(parse(aiVideoInput, video('veo-3.1', { generate_audio: true })).generate_audio).toBe(true);
    expectRefused(aiVideoInput, video('veo-3.1', { generate_audio: 1 }), 'generate_audio', 'must be true or false');
  });
});

describe('aiVideoInput: frames', () => {
  const takes: VideoModel[] = ['veo-3.1', 'veo-3.1-fast', 'kling-o3', 'seedance-2.0-frames', 'seedance-2.0-frames-fast'];
  const refuses = VIDEO_MODELS.filter((m) => !takes.includes(m));
  const B = 'https://cdn.example.com/last.png';

  it.each(takes)('%s takes a first and a last frame', (model) => {
    const out = parse(aiVideoInput, video(model, { first_frame_image_url: URL_A, last_frame_image_url: B }));
    expect(out.first_frame_image_url).toBe(URL_A);
    expect(out.last_frame_image_url).toBe(B);
  });

  it.each(takes)('%s refuses a last frame without a first', (model) => {
    const body = video(model, { first_frame_image_url: undefined, last_frame_image_url: B });
    expectRefused(aiVideoInput, body, 'first_frame_image_url');
  });

  it.each(['veo-3.1', 'veo-3.1-fast', 'kling-o3'] as const)('%s needs no frame', (model) => {
    const out = parse(aiVideoInput, video(model));
    expect(out.first_frame_image_url).toBeUndefined();
    expect('last_frame_image_url' in out).toBe(false);
  });

  it.each(FRAMES_REQUIRED)('%s requires a first frame', (model) => {
    expectRefused(aiVideoInput, video(model, { first_frame_image_url: undefined }), 'first_frame_image_url', `is required for ${model}`);
    expectRefused(aiVideoInput, video(model, { first_frame_image_url: null }), 'first_frame_image_url', `is required for ${model}`);
    expect(parse(aiVideoInput, video(model)).first_frame_image_url).toBe(URL_A);
  });

  it.each(refuses)('%s refuses frames', (model) => {
    const wording = `only veo-3.1, veo-3.1-fast, kling-o3, seedance-2.0-frames and seedance-2.0-frames-fast take frame images; ${model} does not`;
    expectRefused(aiVideoInput, video(model, { first_frame_image_url: URL_A }), 'first_frame_image_url', wording);
    expectRefused(aiVideoInput, video(model, { last_frame_image_url: B }), 'last_frame_image_url', wording);
  });

  it('refuses non-http frame URLs', () => {
    expectRefused(aiVideoInput, video('veo-3.1', { first_frame_image_url: 'ftp://x.test/a.png' }), 'first_frame_image_url', 'must be an http(s) URL or an upload reference upload:<id>');
    expectRefused(aiVideoInput, video('veo-3.1', { first_frame_image_url: URL_A, last_frame_image_url: 'nope' }), 'last_frame_image_url');
  });
});

describe('aiVideoInput: reference images', () => {
  const takes: VideoModel[] = ['kling-o3', ...SEEDANCE];
  const refuses = VIDEO_MODELS.filter((m) => !takes.includes(m));

  it.each(takes)('%s takes up to 4', (model) => {
    expect(parse(aiVideoInput, video(model, { reference_image_urls: urls(4) })).reference_image_urls).toEqual(urls(4));
    expect(parse(aiVideoInput, video(model, { reference_image_urls: [] })).reference_image_urls).toEqual([]);
    expectRefused(aiVideoInput, video(model, { reference_image_urls: urls(5) }), 'reference_image_urls', `${model} takes at most 4 reference images`);
  });

  it.each(refuses)('%s takes none', (model) => {
    expect(parse(aiVideoInput, video(model)).reference_image_urls).toEqual([]);
    expect(parse(aiVideoInput, video(model, { reference_image_urls: [] })).reference_image_urls).toEqual([]);
    expectRefused(
      aiVideoInput,
      video(model, { reference_image_urls: urls(1) }),
      'reference_image_urls',
      `only kling-o3, seedance-2.0, seedance-2.0-fast, seedance-2.0-frames and seedance-2.0-frames-fast take reference images; ${model} does not`,
    );
  });

  it('checks each URL and the array', () => {
    expectRefused(aiVideoInput, video('kling-o3', { reference_image_urls: [URL_A, 'javascript:alert(1)'] }), 'reference_image_urls.1', 'must be an http(s) URL or an upload reference upload:<id>');
    expectRefused(aiVideoInput, video('kling-o3', { reference_image_urls: URL_A }), 'reference_image_urls', 'must be an array of http(s) URLs or upload references');
    expectRefused(aiVideoInput, video('kling-o3', { reference_image_urls: urls(21) }), 'reference_image_urls', 'must list at most 20 URLs');
  });

  it.each(VIDEO_MODELS)('%s takes a single reference_image_url', (model) => {
    expect(parse(aiVideoInput, video(model, { reference_image_url: URL_A })).reference_image_url).toBe(URL_A);
  });

  it('refuses a non-http reference_image_url', () => {
    expectRefused(aiVideoInput, video('sora-2', { reference_image_url: 'file:///etc/passwd' }), 'reference_image_url', 'must be an http(s) URL or an upload reference upload:<id>');
  });
});

describe('aiVideoInput: brand and products', () => {
  const uses: VideoModel[] = ['kling-o3', ...SEEDANCE];
  const ignores = VIDEO_MODELS.filter((m) => !uses.includes(m));

  it.each(uses)('%s keeps them', (model) => {
    const out = parse(aiVideoInput, video(model, { brand_id: U1.toUpperCase(), product_ids: [U2, U3, U2] }));
    expect(out.brand_id).toBe(U1);
    expect(out.product_ids).toEqual([U2, U3]);
  });

  it.each(ignores)('%s accepts and drops them', (model) => {
    const out = parse(aiVideoInput, video(model, { brand_id: U1, product_ids: [U2, U3] }));
    expect('brand_id' in out).toBe(false);
    expect(out.product_ids).toEqual([]);
  });

  it.each(VIDEO_MODELS)('%s still checks them', (model) => {
    expectRefused(aiVideoInput, video(model, { brand_id: 'brand-1' }), 'brand_id', 'must be a UUID');
    expectRefused(aiVideoInput, video(model, { product_ids: [U1, U2, U3, U4] }), 'product_ids', 'must list at most 3 products');
    expectRefused(aiVideoInput, video(model, { product_ids: ['p1'] }), 'product_ids.0', 'must be a UUID');
  });

  it('counts products after removing duplicates', () => {
    expect(parse(aiVideoInput, video('kling-o3', { product_ids: [U1, U2, U3, U1.toUpperCase()] })).product_ids).toEqual([U1, U2, U3]);
  });
});

describe('aiVideoInput: other fields', () => {
  it('gives the whole normalised shape', () => {
    expect(parse(aiVideoInput, { ...video('kling-o3'), unknown: 'x', effort: 'high' })).toEqual({
      model: 'kling-o3',
      prompt: 'a cat surfing',
      aspect_ratio: '16:9',
      duration: 3,
      resolution: '720p',
      quality: 'pro',
      hd: false,
      generate_audio: true,
      reference_image_urls: [],
      product_ids: [],
    });
    expect(parse(aiVideoInput, video('sora-2'))).toEqual({
      model: 'sora-2',
      prompt: 'a cat surfing',
      aspect_ratio: '16:9',
      duration: 4,
      resolution: '720p',
      hd: false,
      generate_audio: false,
      reference_image_urls: [],
      product_ids: [],
    });
  });

  it('checks model', () => {
    expectRefused(aiVideoInput, video('sora-2', { model: undefined }), 'model', 'is required');
    expectRefused(aiVideoInput, video('sora-2', { model: 'sora-3' }), 'model', /must be one of sora-2, sora-2-pro, .* or seedance-2\.0-frames-fast/);
  });

  it('checks prompt', () => {
    expectRefused(aiVideoInput, video('sora-2', { prompt: undefined }), 'prompt', 'is required');
    expectRefused(aiVideoInput, video('sora-2', { prompt: '  ' }), 'prompt', 'must not be empty');
    expectRefused(aiVideoInput, video('sora-2', { prompt: chars(5001) }), 'prompt', 'must be at most 5000 characters');
    expect(parse(aiVideoInput, video('sora-2', { prompt: ` ${chars(4998)} ` })).prompt).toBe(chars(4998));
    expectRefused(aiVideoInput, video('sora-2', { prompt: ` ${chars(5000)} ` }), 'prompt', 'must be at most 5000 characters');
  });

  it('reports the first problem when several fields are wrong', () => {
    expectRefused(aiVideoInput, video('sora-2', { aspect_ratio: '1:1', duration: 5 }), 'aspect_ratio');
  });
});

// ---- swap-avatar ---------------------------------------------------------------------------------------------------

describe('swapAvatarInput', () => {
  const base = { video_url: 'https://cdn.example.com/v.mp4', mode: 'standard', duration: 10, width: 1080, height: 1920 };
  const withAvatar = { ...base, avatar_id: U1, avatar_type: 'custom' };
  const withImage = { ...base, image_url: URL_A };

  it('takes an avatar', () => {
    expect(parse(swapAvatarInput, withAvatar)).toEqual({ ...base, avatar_id: U1, avatar_type: 'custom' });
  });

  it('takes a face image, dropping a stray avatar_type', () => {
    expect(parse(swapAvatarInput, withImage)).toEqual(withImage);
    expect(parse(swapAvatarInput, { ...withImage, avatar_type: 'custom' })).toEqual(withImage);
  });

  it.each(['custom', 'platform', 'product'])('takes avatar_type %s', (avatar_type) => {
    expect(parse(swapAvatarInput, { ...withAvatar, avatar_type }).avatar_type).toBe(avatar_type);
  });

  it('needs exactly one face source', () => {
    expectRefused(swapAvatarInput, base, 'avatar_id', 'is required, or give image_url');
    expectRefused(swapAvatarInput, { ...withAvatar, image_url: URL_A }, 'image_url', 'give either avatar_id or image_url, not both');
    expectRefused(swapAvatarInput, { ...base, avatar_id: U1 }, 'avatar_type', 'is required with avatar_id');
    expectRefused(swapAvatarInput, { ...withAvatar, avatar_type: 'stock' }, 'avatar_type', 'must be one of platform, custom or product');
    expectRefused(swapAvatarInput, { ...withAvatar, avatar_id: 'x' }, 'avatar_id', 'must be a UUID');
    expectRefused(swapAvatarInput, { ...base, image_url: 'ftp://x.test/face.png' }, 'image_url', 'must be an http(s) URL or an upload reference upload:<id>');
  });

  it.each(['standard', 'pro'])('takes mode %s', (mode) => {
    expect(parse(swapAvatarInput, { ...withImage, mode }).mode).toBe(mode);
  });

  it('checks mode and video_url', () => {
    expectRefused(swapAvatarInput, { ...withImage, mode: 'turbo' }, 'mode', 'must be one of standard or pro');
    expectRefused(swapAvatarInput, { ...withImage, mode: undefined }, 'mode', 'is required');
    expectRefused(swapAvatarInput, { ...withImage, video_url: undefined }, 'video_url', 'is required');
    expectRefused(swapAvatarInput, { ...withImage, video_url: 'not a url' }, 'video_url', 'must be an http(s) URL or an upload reference upload:<id>');
  });

  it.each([1, 1.5, 29.9, 30])('takes duration %d', (duration) => {
    expect(parse(swapAvatarInput, { ...withImage, duration }).duration).toBe(duration);
  });

  it.each([0, 0.5, 30.1, 31, -1])('refuses duration %d', (duration) => {
    expectRefused(swapAvatarInput, { ...withImage, duration }, 'duration', 'must be a number of seconds from 1 to 30');
  });

  it.each(['width', 'height'])('bounds %s to whole pixels 16-4096', (field) => {
    expect(parse(swapAvatarInput, { ...withImage, [field]: 16 })[field as 'width']).toBe(16);
    expect(parse(swapAvatarInput, { ...withImage, [field]: 4096 })[field as 'width']).toBe(4096);
    for (const v of [15, 4097, 100.5, 0, '1080']) {
      expectRefused(swapAvatarInput, { ...withImage, [field]: v }, field, 'must be a whole number from 16 to 4096');
    }
    expectRefused(swapAvatarInput, { ...withImage, [field]: undefined }, field, 'is required');
  });
});

// ---- localize ------------------------------------------------------------------------------------------------------

describe('localizeInput', () => {
  const base = {
    video_url: 'https://cdn.example.com/v.mp4',
    mode: 'speed',
    output_language: 'es',
    duration: 60,
    width: 1920,
    height: 1080,
  };

  it('applies defaults', () => {
    expect(parse(localizeInput, base)).toEqual({
      ...base,
      translate_audio_only: false,
      speaker_num: undefined,
      enable_dynamic_duration: false,
    });
  });

  it('keeps the flags it is given', () => {
    const out = parse(localizeInput, { ...base, mode: 'precision', translate_audio_only: true, speaker_num: 3, enable_dynamic_duration: true });
    expect(out).toMatchObject({ mode: 'precision', translate_audio_only: true, speaker_num: 3, enable_dynamic_duration: true });
  });

  it.each([
    ['es', 'es'],
    ['ES', 'es'],
    ['pt-BR', 'pt-BR'],
    ['pt-br', 'pt-BR'],
    ['PT-br', 'pt-BR'],
    ['fil', 'fil'],
    ['es-419', 'es-419'],
    ['zh-hans-cn', 'zh-Hans-CN'],
    ['zh-Hant', 'zh-Hant'],
    [' de ', 'de'],
  ])('takes output_language %j as %j', (output_language, expected) => {
    expect(parse(localizeInput, { ...base, output_language }).output_language).toBe(expected);
  });

  it.each(['', 'e', 'spanish', 'pt_BR', 'pt-', 'pt-B', 'pt-BRA', 'es-4190', '12', 'en-US-x'])('refuses output_language %j', (output_language) => {
    expectRefused(localizeInput, { ...base, output_language }, 'output_language', 'must be a language code like es or pt-BR');
  });

  it('requires output_language', () => {
    expectRefused(localizeInput, { ...base, output_language: undefined }, 'output_language', 'is required');
  });

  it.each([1, 1.5, 120])('takes duration %d', (duration) => {
    expect(parse(localizeInput, { ...base, duration }).duration).toBe(duration);
  });

  it.each([0, 0.9, 120.5, 121])('refuses duration %d', (duration) => {
    expectRefused(localizeInput, { ...base, duration }, 'duration', 'must be a number of seconds from 1 to 120');
  });

  it.each([1, 10])('takes speaker_num %i', (speaker_num) => {
    expect(parse(localizeInput, { ...base, speaker_num }).speaker_num).toBe(speaker_num);
  });

  it.each([0, 11, 1.5, '2'])('refuses speaker_num %j', (speaker_num) => {
    expectRefused(localizeInput, { ...base, speaker_num }, 'speaker_num', 'must be a whole number from 1 to 10');
  });

  it('checks the rest', () => {
    expectRefused(localizeInput, { ...base, mode: 'fast' }, 'mode', 'must be one of speed or precision');
    expectRefused(localizeInput, { ...base, width: 8 }, 'width');
    expectRefused(localizeInput, { ...base, height: undefined }, 'height', 'is required');
    expectRefused(localizeInput, { ...base, video_url: 'x' }, 'video_url');
    expectRefused(localizeInput, { ...base, translate_audio_only: 'no' }, 'translate_audio_only', 'must be true or false');
    expectRefused(localizeInput, { ...base, enable_dynamic_duration: 0 }, 'enable_dynamic_duration', 'must be true or false');
  });
});

// ---- video edit ----------------------------------------------------------------------------------------------------

describe('videoEditInput', () => {
  const byUrl = { template_id: 'bold-yellow', video_url: 'https://cdn.example.com/v.mp4' };
  const byGeneration = { template_id: 'bold-yellow', generation_id: U1 };

  it('takes a video URL with defaults', () => {
    expect(parse(videoEditInput, byUrl)).toEqual({ ...byUrl, language: 'en', auto_approve: true });
  });

  it('takes a generation id', () => {
    expect(parse(videoEditInput, { ...byGeneration, generation_id: U1.toUpperCase() })).toEqual({
      ...byGeneration,
      language: 'en',
      auto_approve: true,
    });
  });

  it('needs exactly one source', () => {
    expectRefused(videoEditInput, { template_id: 't' }, 'video_url', 'is required, or give generation_id');
    expectRefused(videoEditInput, { ...byUrl, generation_id: U1 }, 'generation_id', 'give either video_url or generation_id, not both');
    expectRefused(videoEditInput, { ...byUrl, video_url: 'ftp://x.test/v.mp4' }, 'video_url', 'must be an http(s) URL or an upload reference upload:<id>');
    expectRefused(videoEditInput, { ...byGeneration, generation_id: 'gen-1' }, 'generation_id', 'must be a UUID');
  });

  it('checks template_id', () => {
    expect(parse(videoEditInput, { ...byUrl, template_id: chars(100) }).template_id).toBe(chars(100));
    expectRefused(videoEditInput, { ...byUrl, template_id: chars(101) }, 'template_id', 'must be at most 100 characters');
    expectRefused(videoEditInput, { ...byUrl, template_id: '' }, 'template_id', 'must not be empty');
    expectRefused(videoEditInput, { video_url: byUrl.video_url }, 'template_id', 'is required');
  });

  it('takes a language and auto_approve', () => {
    const out = parse(videoEditInput, { ...byUrl, language: 'FR-ca', auto_approve: false });
    expect(out).toMatchObject({ language: 'fr-CA', auto_approve: false });
    expectRefused(videoEditInput, { ...byUrl, language: 'french' }, 'language', 'must be a language code like es or pt-BR');
    expectRefused(videoEditInput, { ...byUrl, auto_approve: 'yes' }, 'auto_approve', 'must be true or false');
  });
});

// ---- images --------------------------------------------------------------------------------------------------------

const IMAGE_SCHEMAS: [string, z.ZodType, Record<string, unknown>][] = [
  ['textToImageInput', textToImageInput, { prompt: 'a red shoe' }],
  ['productShotsInput', productShotsInput, { product_id: U1, style_id: 'studio-white' }],
  ['imageEditInput', imageEditInput, { prompt: 'make it blue', reference_image_urls: [URL_A] }],
];

describe.each(IMAGE_SCHEMAS)('%s shared fields', (_name, schema, extra) => {
  const body = (over: Record<string, unknown>) => ({ model: 'fast', aspect_ratio: '1:1', ...extra, ...over });
  const out = (over: Record<string, unknown>) => parse(schema, body(over)) as Record<string, unknown>;

  it('applies defaults: no effort on fast and pro', () => {
    for (const model of ['fast', 'pro']) {
      const o = out({ model });
      expect(o).toMatchObject({ model, fast: false, aspect_ratio: '1:1', quantity: 1, resolution: '1k' });
      expect('effort' in o).toBe(false);
    }
  });

  it('defaults effort to medium on GPT models', () => {
    expect(out({ model: 'gpt-2' }).effort).toBe('medium');
    expect(out({ model: 'gpt-2.5' }).effort).toBe('medium');
    expect(out({ model: 'gpt-2.5', effort: null }).effort).toBe('medium');
  });

  it.each(['low', 'medium', 'high'])('gpt-2 takes effort %s', (effort) => {
    expect(out({ model: 'gpt-2', effort }).effort).toBe(effort);
  });

  it.each(['xhigh', 'max'])('gpt-2 refuses effort %s', (effort) => {
    expectRefused(schema, body({ model: 'gpt-2', effort }), 'effort', 'gpt-2 takes low, medium or high');
  });

  it.each(['low', 'medium', 'high', 'xhigh', 'max'])('gpt-2.5 takes effort %s', (effort) => {
    expect(out({ model: 'gpt-2.5', effort }).effort).toBe(effort);
  });

  it.each(['fast', 'pro'])('%s refuses any effort', (model) => {
    for (const effort of ['low', 'medium', 'max']) {
      expectRefused(schema, body({ model, effort }), 'effort', `only GPT models (gpt-2 and gpt-2.5) take effort; ${model} does not`);
    }
  });

  it('refuses an unknown effort', () => {
    expectRefused(schema, body({ model: 'gpt-2.5', effort: 'extreme' }), 'effort', 'must be one of low, medium, high, xhigh or max');
  });

  it('takes fast only on gpt-2.5', () => {
    expect(out({ model: 'gpt-2.5', fast: true }).fast).toBe(true);
    for (const model of ['fast', 'pro', 'gpt-2', 'gpt-2.5']) expect(out({ model, fast: false }).fast).toBe(false);
    for (const model of ['fast', 'pro', 'gpt-2']) {
      expectRefused(schema, body({ model, fast: true }), 'fast', `only gpt-2.5 takes fast; ${model} does not`);
    }
    expectRefused(schema, body({ model: 'gpt-2.5', fast: 'yes' }), 'fast', 'must be true or false');
  });

  it('checks model', () => {
    expectRefused(schema, body({ model: undefined }), 'model', 'is required');
    expectRefused(schema, body({ model: 'dall-e' }), 'model', 'must be one of fast, pro, gpt-2 or gpt-2.5');
  });

  it.each(['1:1', '16:9', '9:16', '4:5', '21:9', '100:1', '3:2'])('takes aspect_ratio %s', (aspect_ratio) => {
    expect(out({ aspect_ratio }).aspect_ratio).toBe(aspect_ratio);
  });

  it.each(['auto', '0:1', '101:1', '16/9', '1.5:1', 'square', ''])('refuses aspect_ratio %j', (aspect_ratio) => {
    expectRefused(schema, body({ aspect_ratio }), 'aspect_ratio', 'must be a ratio W:H of whole numbers from 1 to 100, e.g. 16:9 or 4:5');
  });

  it('requires aspect_ratio', () => {
    expectRefused(schema, body({ aspect_ratio: undefined }), 'aspect_ratio', 'is required');
  });

  it.each([1, 2, 8])('takes quantity %i', (quantity) => {
    expect(out({ quantity }).quantity).toBe(quantity);
  });

  it.each([0, 9, 1.5, -1, '2'])('refuses quantity %j', (quantity) => {
    expectRefused(schema, body({ quantity }), 'quantity', 'must be a whole number from 1 to 8');
  });

  it.each(['1k', '2k', '4k'])('takes resolution %s', (resolution) => {
    expect(out({ resolution }).resolution).toBe(resolution);
  });

  it.each(['8k', '1K', '1024', ''])('refuses resolution %j', (resolution) => {
    expectRefused(schema, body({ resolution }), 'resolution', 'must be one of 1k, 2k or 4k');
  });
});

describe('textToImageInput', () => {
  const base = { model: 'pro', aspect_ratio: '16:9', prompt: 'a red shoe' };

  it('gives the normalised shape', () => {
    expect(parse(textToImageInput, { ...base, junk: true })).toEqual({
      model: 'pro',
      fast: false,
      aspect_ratio: '16:9',
      quantity: 1,
      resolution: '1k',
      prompt: 'a red shoe',
      product_ids: [],
    });
  });

  it('checks prompt', () => {
    expectRefused(textToImageInput, { ...base, prompt: undefined }, 'prompt', 'is required');
    expectRefused(textToImageInput, { ...base, prompt: ' ' }, 'prompt', 'must not be empty');
    expectRefused(textToImageInput, { ...base, prompt: chars(5001) }, 'prompt', 'must be at most 5000 characters');
  });

  it('takes a brand and up to 3 distinct products', () => {
    const out = parse(textToImageInput, { ...base, brand_id: U1, product_ids: [U2, U3, U4, U2.toUpperCase()] });
    expect(out.brand_id).toBe(U1);
    expect(out.product_ids).toEqual([U2, U3, U4]);
    expectRefused(textToImageInput, { ...base, product_ids: [U1, U2, U3, U4] }, 'product_ids', 'must list at most 3 products');
    expectRefused(textToImageInput, { ...base, product_ids: U1 }, 'product_ids', 'must be an array of UUIDs');
    expectRefused(textToImageInput, { ...base, brand_id: 'acme' }, 'brand_id', 'must be a UUID');
  });
});

describe('productShotsInput', () => {
  const base = { model: 'fast', aspect_ratio: '1:1', product_id: U1, style_id: 'studio-white' };

  it('gives the normalised shape', () => {
    expect(parse(productShotsInput, { ...base, additional_prompt: '  on marble  ' })).toEqual({
      model: 'fast',
      fast: false,
      aspect_ratio: '1:1',
      quantity: 1,
      resolution: '1k',
      product_id: U1,
      style_id: 'studio-white',
      additional_prompt: 'on marble',
    });
  });

  it('drops a blank additional_prompt', () => {
    expect('additional_prompt' in parse(productShotsInput, { ...base, additional_prompt: '   ' })).toBe(false);
    expect('additional_prompt' in parse(productShotsInput, { ...base, additional_prompt: null })).toBe(false);
  });

  it('checks its fields', () => {
    expectRefused(productShotsInput, { ...base, product_id: undefined }, 'product_id', 'is required');
    expectRefused(productShotsInput, { ...base, product_id: 'shoe' }, 'product_id', 'must be a UUID');
    expectRefused(productShotsInput, { ...base, style_id: undefined }, 'style_id', 'is required');
    expectRefused(productShotsInput, { ...base, style_id: '' }, 'style_id', 'must not be empty');
    expectRefused(productShotsInput, { ...base, style_id: chars(101) }, 'style_id', 'must be at most 100 characters');
    expect(parse(productShotsInput, { ...base, style_id: chars(100) }).style_id).toBe(chars(100));
    expect(parse(productShotsInput, { ...base, additional_prompt: chars(2000) }).additional_prompt).toBe(chars(2000));
    expectRefused(productShotsInput, { ...base, additional_prompt: chars(2001) }, 'additional_prompt', 'must be at most 2000 characters');
    expectRefused(productShotsInput, { ...base, additional_prompt: 7 }, 'additional_prompt', 'must be a string');
  });
});

describe('imageEditInput', () => {
  const base = { model: 'gpt-2.5', aspect_ratio: '9:16', prompt: 'make it blue', reference_image_urls: [URL_A] };

  it('gives the normalised shape', () => {
    expect(parse(imageEditInput, { ...base, brand_id: U1, product_ids: [U2] })).toEqual({
      model: 'gpt-2.5',
      effort: 'medium',
      fast: false,
      aspect_ratio: '9:16',
      quantity: 1,
      resolution: '1k',
      prompt: 'make it blue',
      reference_image_urls: [URL_A],
      brand_id: U1,
      product_ids: [U2],
    });
  });

  it('takes 1 or more reference URLs, leaving the cap of 5 to the count over every source', () => {
    expect(parse(imageEditInput, { ...base, reference_image_urls: urls(5) }).reference_image_urls).toEqual(urls(5));
    expect(parse(imageEditInput, { ...base, reference_image_urls: urls(6) }).reference_image_urls).toEqual(urls(6));
    expectRefused(imageEditInput, { ...base, reference_image_urls: [] }, 'reference_image_urls', 'must list at least 1 URL');
    expectRefused(imageEditInput, { ...base, reference_image_urls: undefined }, 'reference_image_urls', 'is required');
    expectRefused(imageEditInput, { ...base, reference_image_urls: URL_A }, 'reference_image_urls', 'must be an array of http(s) URLs or upload references');
    expectRefused(imageEditInput, { ...base, reference_image_urls: [URL_A, 'data:image/png;base64,AA=='] }, 'reference_image_urls.1', 'must be an http(s) URL or an upload reference upload:<id>');
  });

  it('checks prompt, brand and products', () => {
    expectRefused(imageEditInput, { ...base, prompt: undefined }, 'prompt', 'is required');
    expectRefused(imageEditInput, { ...base, brand_id: 'x' }, 'brand_id', 'must be a UUID');
    expectRefused(imageEditInput, { ...base, product_ids: [U1, U2, U3, U4] }, 'product_ids', 'must list at most 3 products');
  });
});

describe('checkReferenceImageTotal', () => {
  it.each([
    { urls: 5, brand: 0, products: 0 },
    { urls: 1, brand: 2, products: 2 },
    { urls: 0, brand: 2, products: 3 },
    { urls: 0, brand: 0, products: 0 },
  ])('accepts %o', (counts) => {
    expect(() => checkReferenceImageTotal(counts)).not.toThrow();
  });

  it('names every source when the total is over 5', () => {
    const e = (() => {
      try {
        checkReferenceImageTotal({ urls: 4, brand: 2, products: 1 });
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe('validation_error');
    expect((e as AppError).status).toBe(400);
    expect((e as AppError).message).toBe(
      'reference images: 7 in total (4 from reference_image_urls, 2 from brand_id, 1 from product_ids); at most 5 are allowed',
    );
  });

  it('names every source when the URLs alone pass 5', () => {
    expect(() => checkReferenceImageTotal({ urls: 6, brand: 0, products: 0 })).toThrow(
      'reference images: 6 in total (6 from reference_image_urls, 0 from brand_id, 0 from product_ids); at most 5 are allowed',
    );
  });

  it('refuses 6', () => {
    expect(() => checkReferenceImageTotal({ urls: 5, brand: 1, products: 0 })).toThrow(
      'reference images: 6 in total (5 from reference_image_urls, 1 from brand_id, 0 from product_ids); at most 5 are allowed',
    );
  });
});

describe('imageSize', () => {
  it.each([
    ['1:1', '1k', 1024, 1024],
    ['1:1', '2k', 2048, 2048],
    ['1:1', '4k', 4096, 4096],
    ['16:9', '1k', 1024, 576],
    ['9:16', '1k', 576, 1024],
    ['16:9', '2k', 2048, 1152],
    ['16:9', '4k', 4096, 2304],
    ['4:5', '1k', 819, 1024],
    ['21:9', '1k', 1024, 439],
    ['3:2', '2k', 2048, 1365],
    ['100:1', '1k', 1024, 10],
  ] as const)('%s at %s is %ix%i', (ratio, res, width, height) => {
    expect(imageSize(ratio, res)).toEqual({ width, height });
  });

  it('throws on something that is not a ratio', () => {
    expect(() => imageSize('auto', '1k')).toThrow(RangeError);
  });
});

describe('model table coverage', () => {
  it('the test bodies fit every model', () => {
    for (const m of VIDEO_MODELS) {
      expect(VIDEO_MODEL_TABLE[m].resolutions).toContain('720p');
      expect(() => parse(aiVideoInput, video(m))).not.toThrow();
    }
  });
});
