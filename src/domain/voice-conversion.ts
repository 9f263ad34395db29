import type { CatalogueVoice } from './catalogue/voices.ts';

/** Where speech-to-speech moves a recording for a catalogue voice (see engines/speech/voice-change.ts). */
export interface ConversionTarget {
  pitchSemitones: number;
  formantSemitones: number;
  brightness: number;
  warmth: number;
}

// A source voice is unknown, so each voice has one fixed move: roughly what turns an average adult
// speaker into that gender and age (pitch and vocal-tract size), then the style's colour.
const BY_GENDER_AGE: Record<string, Omit<ConversionTarget, 'brightness' | 'warmth'>> = {
  'female:kid': { pitchSemitones: 9, formantSemitones: 4 },
  'female:young_adult': { pitchSemitones: 6, formantSemitones: 3 },
  'female:adult': { pitchSemitones: 5, formantSemitones: 2.5 },
  'female:senior': { pitchSemitones: 3, formantSemitones: 1.5 },
  'male:kid': { pitchSemitones: 8, formantSemitones: 4 },
  'male:young_adult': { pitchSemitones: -3, formantSemitones: -1.5 },
  'male:adult': { pitchSemitones: -4, formantSemitones: -2 },
  'male:senior': { pitchSemitones: -5, formantSemitones: -2.5 },
  'other:kid': { pitchSemitones: 7, formantSemitones: 3 },
  'other:young_adult': { pitchSemitones: 2, formantSemitones: 0.5 },
  'other:adult': { pitchSemitones: 1, formantSemitones: 0 },
  'other:senior': { pitchSemitones: -1, formantSemitones: -0.5 },
};

const BY_STYLE: Record<CatalogueVoice['style'], Pick<ConversionTarget, 'brightness' | 'warmth'>> = {
  professional: { brightness: 0.1, warmth: 0.2 },
  casual: { brightness: 0, warmth: 0.3 },
  energetic: { brightness: 0.4, warmth: 0 },
  // Breath is high-frequency noise and a whisper has no chest: highs up, lows down.
  whisper: { brightness: 0.6, warmth: -0.6 },
  speaker: { brightness: 0.2, warmth: 0.5 },
};

/**
 * `strength` (the request's voice_settings.similarity_boost, 0-1, default 1) scales the whole move:
 * 0 keeps the recording's own voice, 1 goes all the way to the catalogue voice.
 */
export function conversionTarget(voice: Pick<CatalogueVoice, 'gender' | 'age_group' | 'style'>, strength = 1): ConversionTarget {
  if (!Number.isFinite(strength) || strength < 0 || strength > 1) throw new RangeError(`strength must be 0-1, not ${strength}`);
  const base = BY_GENDER_AGE[`${voice.gender}:${voice.age_group}`];
  if (!base) throw new RangeError(`no conversion for ${voice.gender} ${voice.age_group}`);
  const colour = BY_STYLE[voice.style];
  const scale = (x: number) => Math.round(x * strength * 100) / 100;
  return {
    pitchSemitones: scale(base.pitchSemitones),
    formantSemitones: scale(base.formantSemitones),
    brightness: scale(colour.brightness),
    warmth: scale(colour.warmth),
  };
}
