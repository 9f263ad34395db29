import { z } from 'zod';
import { chars, inputUrl, pageQuery } from './inputs.ts';

// The spec's Voice resource values; GET /voices filters accept exactly these.
export const VOICE_GENDERS = ['male', 'female', 'other'] as const;
export const VOICE_AGE_GROUPS = ['kid', 'young_adult', 'adult', 'senior'] as const;
export const VOICE_ACCENTS = ['american', 'british', 'french', 'danish', 'swedish', 'german', 'norwegian', 'spanish', 'neutral'] as const;
export const VOICE_STYLES = ['professional', 'casual', 'energetic', 'whisper', 'speaker'] as const;

export type VoiceGender = (typeof VOICE_GENDERS)[number];
export type VoiceAgeGroup = (typeof VOICE_AGE_GROUPS)[number];
export type VoiceAccent = (typeof VOICE_ACCENTS)[number];
export type VoiceStyle = (typeof VOICE_STYLES)[number];

/** Ours (the spec leaves it open): about five minutes of speech. */
export const MAX_VOICEOVER_TEXT = 5000;
export const MAX_VOICE_MODEL = 100;
/** Speech-to-speech sources: ours. 120 s of uncompressed 48 kHz stereo WAV is 23 MB. */
export const MAX_SOURCE_AUDIO_BYTES = 25 * 1024 * 1024;

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });

export const voicesQuery = pageQuery.extend({
  gender: oneOf(VOICE_GENDERS).optional(),
  age_group: oneOf(VOICE_AGE_GROUPS).optional(),
  accent: oneOf(VOICE_ACCENTS).optional(),
  style: oneOf(VOICE_STYLES).optional(),
});
export type VoicesQuery = z.output<typeof voicesQuery>;

const unit = z
  .number({ error: 'must be a number between 0 and 1' })
  .min(0, 'must be a number between 0 and 1')
  .max(1, 'must be a number between 0 and 1');

export const voiceSettings = z
  .object({ stability: unit.optional(), similarity_boost: unit.optional() }, { error: 'must be an object' })
  .nullish()
  .transform((v) => v ?? undefined);

/** Absent and null are the same to clients that serialise every key (as elsewhere in the API). */
const absentIfNull = <S extends z.ZodType>(schema: S) => schema.nullish().transform((v): z.output<S> | undefined => v ?? undefined);

const voiceId = chars(200, z.string({ error: 'is required' })).trim().min(1, 'must not be empty');

export const textToSpeechInput = z.object({
  text: chars(MAX_VOICEOVER_TEXT, z.string({ error: 'is required' })).refine((s) => s.trim().length > 0, 'must not be empty'),
  voice_id: voiceId,
  model: absentIfNull(
    chars(MAX_VOICE_MODEL, z.string({ error: 'must be a string' })).trim().min(1, 'must not be empty'),
  ),
  voice_settings: voiceSettings,
});
export type TextToSpeechInput = z.output<typeof textToSpeechInput>;

export const speechToSpeechInput = z.object({
  audio_url: inputUrl,
  voice_id: voiceId,
  duration: absentIfNull(
    z.number({ error: 'must be a number of seconds' }).gt(0, 'must be more than 0 seconds').max(120, 'must be at most 120 seconds'),
  ),
  voice_settings: voiceSettings,
});
export type SpeechToSpeechInput = z.output<typeof speechToSpeechInput>;
