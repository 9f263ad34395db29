import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { PREVIEW_TEXT, VOICES } from '../../src/domain/catalogue/voices.ts';
import { AppError } from '../../src/domain/errors.ts';
import { speechToSpeechCredits } from '../../src/domain/pricing.ts';
import { parseInput } from '../../src/domain/validate.ts';
import { conversionTarget } from '../../src/domain/voice-conversion.ts';
import {
  MAX_SOURCE_AUDIO_BYTES,
  speechToSpeechInput,
  textToSpeechInput,
  VOICE_ACCENTS,
  VOICE_AGE_GROUPS,
  VOICE_GENDERS,
  VOICE_STYLES,
  voicesQuery,
} from '../../src/domain/voiceover-inputs.ts';
import { voiceFilters } from '../../src/adapters/engines/speech/voice-change.ts';
import { isLanguage, isVariant, VARIANTS } from '../../src/adapters/engines/speech/espeak-voices.ts';

/** Asserts a 400 validation_error whose message starts with the field name. */
function expectRefused(schema: z.ZodType, input: unknown, field: string): AppError {
  let accepted: unknown;
  try {
    accepted = parseInput(schema, input);
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    expect(e.code).toBe('validation_error');
    expect(e.status).toBe(400);
    expect(e.message.startsWith(`${field}: `), `message ${JSON.stringify(e.message)} should name ${field}`).toBe(true);
    return e;
  }
  throw new Error(`expected ${field} to be refused, but the input was accepted as ${JSON.stringify(accepted)}`);
}

// The spec's Voice resource, copied here on purpose: a change to the enums in src must fail.
const SPEC = {
  gender: ['male', 'female', 'other'],
  age_group: ['kid', 'young_adult', 'adult', 'senior'],
  accent: ['american', 'british', 'french', 'danish', 'swedish', 'german', 'norwegian', 'spanish', 'neutral'],
  style: ['professional', 'casual', 'energetic', 'whisper', 'speaker'],
} as const;
type Filter = keyof typeof SPEC;
const FILTERS = Object.keys(SPEC) as Filter[];

describe('the voice enums', () => {
  it('are exactly the spec values', () => {
    expect([...VOICE_GENDERS]).toEqual(SPEC.gender);
    expect([...VOICE_AGE_GROUPS]).toEqual(SPEC.age_group);
    expect([...VOICE_ACCENTS]).toEqual(SPEC.accent);
    expect([...VOICE_STYLES]).toEqual(SPEC.style);
  });
});

describe('voicesQuery', () => {
  it('defaults to the first page of 20 without filters', () => {
    expect(parseInput(voicesQuery, {})).toEqual({ limit: 20, offset: 0 });
  });

  for (const field of FILTERS) {
    it.each(SPEC[field].map((v) => [v]))(`accepts ${field}=%s`, (value) => {
      expect(parseInput(voicesQuery, { [field]: value })).toEqual({ limit: 20, offset: 0, [field]: value });
    });

    it.each([['Male'], ['MALE'], [''], ['robot'], [' american'], ['young-adult'], ['kids']])(`refuses ${field}=%j naming the field`, (value) => {
      const e = expectRefused(voicesQuery, { [field]: value }, field);
      // The message lists what is allowed.
      for (const allowed of SPEC[field]) expect(e.message).toContain(allowed);
    });

    it(`refuses a repeated ${field} (an array) naming the field`, () => {
      expectRefused(voicesQuery, { [field]: [SPEC[field][0], SPEC[field][1]] }, field);
    });
  }

  it('combines filters with paging', () => {
    expect(parseInput(voicesQuery, { gender: 'female', age_group: 'senior', accent: 'british', style: 'whisper', limit: '5', offset: '10' })).toEqual({
      gender: 'female',
      age_group: 'senior',
      accent: 'british',
      style: 'whisper',
      limit: 5,
      offset: 10,
    });
  });

  it.each([['1'], ['100']])('accepts limit=%s', (limit) => {
    expect(parseInput(voicesQuery, { limit }).limit).toBe(Number(limit));
  });

  it.each([['0'], ['101'], ['-1'], ['1.5'], ['ten'], ['']])('refuses limit=%j', (limit) => {
    expectRefused(voicesQuery, { limit }, 'limit');
  });

  it.each([['-1'], ['x']])('refuses offset=%j', (offset) => {
    expectRefused(voicesQuery, { offset }, 'offset');
  });
});

describe('textToSpeechInput', () => {
  const voice_id = VOICES[0]!.id;

  it('accepts 5000 characters and refuses 5001', () => {
    expect(parseInput(textToSpeechInput, { text: 'a'.repeat(5000), voice_id }).text).toHaveLength(5000);
    expectRefused(textToSpeechInput, { text: 'a'.repeat(5001), voice_id }, 'text');
  });

  it('counts characters, not UTF-16 units: 5000 emoji are allowed', () => {
    expect(() => parseInput(textToSpeechInput, { text: '🎉'.repeat(5000), voice_id })).not.toThrow();
    expectRefused(textToSpeechInput, { text: '🎉'.repeat(5001), voice_id }, 'text');
  });

  it.each([[''], ['   '], ['\n\t']])('refuses empty text %j', (text) => {
    expectRefused(textToSpeechInput, { text, voice_id }, 'text');
  });

  it('refuses missing or non-string text and voice_id', () => {
    expectRefused(textToSpeechInput, { voice_id }, 'text');
    expectRefused(textToSpeechInput, { text: 5, voice_id }, 'text');
    expectRefused(textToSpeechInput, { text: 'hi' }, 'voice_id');
    expectRefused(textToSpeechInput, { text: 'hi', voice_id: '' }, 'voice_id');
    expectRefused(textToSpeechInput, { text: 'hi', voice_id: 42 }, 'voice_id');
  });

  it('refuses a body that is not an object', () => {
    expect(() => parseInput(textToSpeechInput, undefined)).toThrow(AppError);
    expect(() => parseInput(textToSpeechInput, 'text')).toThrow(AppError);
  });

  it('accepts model up to 100 characters', () => {
    expect(parseInput(textToSpeechInput, { text: 'hi', voice_id, model: 'm'.repeat(100) }).model).toHaveLength(100);
    expectRefused(textToSpeechInput, { text: 'hi', voice_id, model: 'm'.repeat(101) }, 'model');
    expectRefused(textToSpeechInput, { text: 'hi', voice_id, model: '' }, 'model');
    expectRefused(textToSpeechInput, { text: 'hi', voice_id, model: 7 }, 'model');
  });

  it('takes model: null as absent', () => {
    expect(parseInput(textToSpeechInput, { text: 'hi', voice_id, model: null }).model).toBeUndefined();
  });

  describe('voice_settings', () => {
    const settings = (voice_settings: unknown) => parseInput(textToSpeechInput, { text: 'hi', voice_id, voice_settings }).voice_settings;

    it.each([[0], [1], [0.5]])('accepts %d for both keys', (x) => {
      expect(settings({ stability: x, similarity_boost: x })).toEqual({ stability: x, similarity_boost: x });
    });

    it.each([
      ['stability', -0.01],
      ['stability', 1.01],
      ['similarity_boost', -0.01],
      ['similarity_boost', 1.01],
      ['stability', '0.5'],
      ['similarity_boost', true],
    ])('refuses %s=%j naming the key', (key, value) => {
      expectRefused(textToSpeechInput, { text: 'hi', voice_id, voice_settings: { [key]: value } }, `voice_settings.${key}`);
    });

    it('ignores keys it does not know', () => {
      expect(settings({ stability: 0.3, style: 0.9, use_speaker_boost: true })).toEqual({ stability: 0.3 });
    });

    it('treats null and absent alike, and keeps an empty object', () => {
      expect(settings(null)).toBeUndefined();
      expect(settings(undefined)).toBeUndefined();
      expect(settings({})).toEqual({});
    });

    it.each([['calm'], [1], [[0.5]]])('refuses %j', (value) => {
      expectRefused(textToSpeechInput, { text: 'hi', voice_id, voice_settings: value }, 'voice_settings');
    });
  });
});

describe('speechToSpeechInput', () => {
  const base = { audio_url: 'https://audio.example.com/take-1.wav', voice_id: VOICES[0]!.id };

  it('needs audio_url and voice_id; duration and voice_settings are optional', () => {
    expect(parseInput(speechToSpeechInput, base)).toEqual(base);
    expectRefused(speechToSpeechInput, { voice_id: base.voice_id }, 'audio_url');
    expectRefused(speechToSpeechInput, { audio_url: base.audio_url }, 'voice_id');
  });

  it.each([[0.001], [1], [30], [119.99], [120]])('accepts duration %d', (duration) => {
    expect(parseInput(speechToSpeechInput, { ...base, duration }).duration).toBe(duration);
  });

  it('takes duration: null as absent', () => {
    expect(parseInput(speechToSpeechInput, { ...base, duration: null }).duration).toBeUndefined();
  });

  it.each([[0], [-0.001], [-1], [120.01], [121], ['30'], [true], [{}]])('refuses duration %j', (duration) => {
    expectRefused(speechToSpeechInput, { ...base, duration }, 'duration');
  });

  it.each([['http://audio.example.com/a.mp3'], ['https://audio.example.com/a.mp3?sig=1']])('accepts audio_url %s', (audio_url) => {
    expect(parseInput(speechToSpeechInput, { ...base, audio_url }).audio_url).toBe(audio_url);
  });

  it.each([['ftp://audio.example.com/a.mp3'], ['file:///etc/passwd'], ['data:audio/wav;base64,AAAA'], ['javascript:alert(1)'], ['not a url'], [''], [42]])(
    'refuses audio_url %j',
    (audio_url) => {
      expectRefused(speechToSpeechInput, { ...base, audio_url }, 'audio_url');
    },
  );

  it('checks voice_settings like text-to-speech', () => {
    expect(parseInput(speechToSpeechInput, { ...base, voice_settings: { similarity_boost: 0, extra: 1 } }).voice_settings).toEqual({ similarity_boost: 0 });
    expect(parseInput(speechToSpeechInput, { ...base, voice_settings: null }).voice_settings).toBeUndefined();
    expectRefused(speechToSpeechInput, { ...base, voice_settings: { similarity_boost: 1.01 } }, 'voice_settings.similarity_boost');
  });

  it('limits sources to 25 MiB', () => {
    expect(MAX_SOURCE_AUDIO_BYTES).toBe(25 * 1024 * 1024);
  });
});

describe('the voice catalogue', () => {
  it('has 30 voices with unique ids and unique names', () => {
    expect(VOICES).toHaveLength(30);
    expect(new Set(VOICES.map((v) => v.id)).size).toBe(VOICES.length);
    expect(new Set(VOICES.map((v) => v.name.toLowerCase())).size).toBe(VOICES.length);
  });

  // Clients store voice ids: a re-seed or a reordering of the catalogue must never move one.
  it('keeps its fixed ids, each bound to the same voice', () => {
    expect(VOICES.map((v) => [v.id, v.name])).toEqual([
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10001', 'Emma'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10002', 'James'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10003', 'Olivia'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10004', 'Jake'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10005', 'Ruth'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10006', 'Max'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10007', 'Lily'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10008', 'Charlotte'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10009', 'Oliver'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1000a', 'Harry'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1000b', 'Arthur'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1000c', 'Chloé'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1000d', 'Antoine'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1000e', 'Freja'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1000f', 'Mads'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10010', 'Astrid'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10011', 'Erik'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10012', 'Lena'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10013', 'Lukas'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10014', 'Ingrid'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10015', 'Ole'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10016', 'Lucía'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10017', 'Javier'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10018', 'Alex'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10019', 'Sam'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1001a', 'Nova'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1001b', 'Eli'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1001c', 'Morgan'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1001d', 'Grace'],
      ['3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1001e', 'Walter'],
    ]);
  });

  it('uses lowercase RFC 4122 UUIDs (version 4, variant 10xx)', () => {
    for (const v of VOICES) expect(v.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  for (const field of FILTERS) {
    it(`has every ${field} of the spec, and nothing else`, () => {
      const seen = new Set(VOICES.map((v) => v[field]));
      expect([...seen].sort()).toEqual([...SPEC[field]].sort());
    });
  }

  it('has at least one voice per accent and per style', () => {
    for (const accent of SPEC.accent) expect(VOICES.filter((v) => v.accent === accent).length, accent).toBeGreaterThanOrEqual(1);
    for (const style of SPEC.style) expect(VOICES.filter((v) => v.style === style).length, style).toBeGreaterThanOrEqual(1);
  });

  describe.each(VOICES.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    it('is spoken by an eSpeak language and variant this build has', () => {
      expect(isLanguage(v.espeak.language), v.espeak.language).toBe(true);
      if (v.espeak.variant !== undefined) expect(isVariant(v.espeak.variant), v.espeak.variant).toBe(true);
    });

    it('has pitch 0-100 and speed 0.5-2', () => {
      expect(Number.isFinite(v.espeak.pitch)).toBe(true);
      expect(v.espeak.pitch).toBeGreaterThanOrEqual(0);
      expect(v.espeak.pitch).toBeLessThanOrEqual(100);
      expect(v.espeak.speed).toBeGreaterThanOrEqual(0.5);
      expect(v.espeak.speed).toBeLessThanOrEqual(2);
    });

    it('is spoken with a variant of its own gender (a male voice never by a female speaker, and the reverse)', () => {
      const variant = VARIANTS.find((x) => x.id === v.espeak.variant);
      if (v.gender === 'male' || v.gender === 'female') expect(variant?.gender).toBe(v.gender);
    });

    it('speaks its language: the accent maps to the matching eSpeak language, and a preview line exists', () => {
      const expected: Record<string, string> = {
        american: 'en-us',
        british: 'en-gb',
        french: 'fr-fr',
        danish: 'da',
        swedish: 'sv',
        german: 'de',
        norwegian: 'nb',
        spanish: 'es',
        neutral: 'en-us',
      };
      expect(v.espeak.language).toBe(expected[v.accent]);
      expect(PREVIEW_TEXT[v.espeak.language]).toBeTruthy();
    });

    it('whispers when its style is whisper', () => {
      if (v.style === 'whisper') expect(v.espeak.variant).toMatch(/^whisperf?$/);
      else expect(v.espeak.variant ?? '').not.toMatch(/^whisper/);
    });
  });
});

describe('conversionTarget', () => {
  it('stays within what the voice changer takes, for every voice and strength', () => {
    for (const v of VOICES) {
      for (const strength of [0, 0.25, 0.5, 1]) {
        const t = conversionTarget(v, strength);
        expect(Math.abs(t.pitchSemitones)).toBeLessThanOrEqual(12);
        expect(Math.abs(t.formantSemitones)).toBeLessThanOrEqual(12);
        expect(Math.abs(t.brightness)).toBeLessThanOrEqual(1);
        expect(Math.abs(t.warmth)).toBeLessThanOrEqual(1);
        expect(() => voiceFilters(t, 10)).not.toThrow();
      }
    }
  });

  it('covers every gender, age group and style of the spec', () => {
    for (const gender of SPEC.gender) {
      for (const age_group of SPEC.age_group) {
        for (const style of SPEC.style) expect(() => conversionTarget({ gender, age_group, style })).not.toThrow();
      }
    }
  });

  it('does nothing at strength 0', () => {
    for (const v of VOICES) {
      const t = conversionTarget(v, 0);
      expect([t.pitchSemitones, t.formantSemitones, t.brightness, t.warmth].every((x) => x === 0), v.name).toBe(true);
    }
  });

  it('defaults to the full move (strength 1)', () => {
    for (const v of VOICES) expect(conversionTarget(v)).toEqual(conversionTarget(v, 1));
  });

  it('scales the move with strength', () => {
    for (const v of VOICES) {
      const full = conversionTarget(v, 1);
      const half = conversionTarget(v, 0.5);
      for (const k of ['pitchSemitones', 'formantSemitones', 'brightness', 'warmth'] as const) {
        expect(Math.abs(half[k] - full[k] / 2), `${v.name} ${k}`).toBeLessThanOrEqual(0.01);
      }
    }
  });

  it('moves the pitch monotonically with strength', () => {
    for (const v of VOICES) {
      const pitches = [0, 0.2, 0.4, 0.6, 0.8, 1].map((s) => Math.abs(conversionTarget(v, s).pitchSemitones));
      expect([...pitches].sort((a, b) => a - b)).toEqual(pitches);
    }
  });

  it('raises the pitch for female voices and kids, lowers it for adult and senior men', () => {
    for (const age_group of SPEC.age_group) {
      for (const style of SPEC.style) {
        const female = conversionTarget({ gender: 'female', age_group, style });
        expect(female.pitchSemitones, `female ${age_group}`).toBeGreaterThan(0);
        expect(female.formantSemitones, `female ${age_group}`).toBeGreaterThan(0);
        const kid = conversionTarget({ gender: 'male', age_group: 'kid', style });
        expect(kid.pitchSemitones).toBeGreaterThan(0);
      }
    }
    for (const age_group of ['young_adult', 'adult', 'senior'] as const) {
      const male = conversionTarget({ gender: 'male', age_group, style: 'professional' });
      expect(male.pitchSemitones, `male ${age_group}`).toBeLessThan(0);
      expect(male.formantSemitones, `male ${age_group}`).toBeLessThan(0);
    }
    // Female targets sit above male ones of the same age.
    for (const age_group of SPEC.age_group) {
      expect(conversionTarget({ gender: 'female', age_group, style: 'casual' }).pitchSemitones).toBeGreaterThan(
        conversionTarget({ gender: 'male', age_group, style: 'casual' }).pitchSemitones,
      );
    }
  });

  it('makes whisper voices brighter and thinner', () => {
    const t = conversionTarget({ gender: 'female', age_group: 'adult', style: 'whisper' });
    expect(t.brightness).toBeGreaterThan(0);
    expect(t.warmth).toBeLessThan(0);
  });

  it.each([[-0.01], [1.01], [Number.NaN], [Number.POSITIVE_INFINITY]])('throws on strength %d', (strength) => {
    expect(() => conversionTarget(VOICES[0]!, strength)).toThrow(RangeError);
  });

  it('throws for a gender or age it does not know', () => {
    expect(() => conversionTarget({ gender: 'robot' as never, age_group: 'adult', style: 'casual' })).toThrow(RangeError);
  });
});

// The bracket table itself is in test/unit/pricing.test.ts; these are the edges it does not list.
describe('speechToSpeechCredits, remaining edges', () => {
  it.each([
    [59.99, 2],
    [89.999, 3],
    [119.999, 4],
  ])('%d s costs %i', (seconds, credits) => {
    expect(speechToSpeechCredits(seconds)).toBe(credits);
  });

  it('has no price a hair over 120 s', () => {
    expect(speechToSpeechCredits(120.0001)).toBeNull();
  });

  it.each([[Number.NaN], [Number.POSITIVE_INFINITY]])('refuses %d', (seconds) => {
    expect(() => speechToSpeechCredits(seconds)).toThrow(RangeError);
  });
});
