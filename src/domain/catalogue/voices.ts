import type { VoiceAccent, VoiceAgeGroup, VoiceGender, VoiceStyle } from '../voiceover-inputs.ts';

/** How the local engine speaks a catalogue voice with eSpeak NG (src/adapters/engines/speech). */
export interface EspeakVoice {
  language: string;
  variant?: string;
  /** 0-100, 50 being the voice's own. */
  pitch: number;
  /** Multiple of 175 words per minute. */
  speed: number;
}

export interface CatalogueVoice {
  id: string;
  name: string;
  gender: VoiceGender;
  age_group: VoiceAgeGroup;
  accent: VoiceAccent;
  style: VoiceStyle;
  espeak: EspeakVoice;
}

/** Each accent is spoken by the eSpeak language that has it. */
export const ACCENT_LANGUAGE: Readonly<Record<VoiceAccent, string>> = {
  american: 'en-us',
  british: 'en-gb',
  french: 'fr-fr',
  danish: 'da',
  swedish: 'sv',
  german: 'de',
  norwegian: 'nb',
  spanish: 'es',
  // General American without regional colour at an even pace: the "no accent" read ads ask for.
  neutral: 'en-us',
};

/** Delivery per style: a pitch and a pace around the speaker's own. */
const STYLE_DELIVERY: Readonly<Record<VoiceStyle, { pitch: number; speed: number }>> = {
  professional: { pitch: 48, speed: 0.95 },
  casual: { pitch: 55, speed: 1.05 },
  energetic: { pitch: 65, speed: 1.2 },
  whisper: { pitch: 50, speed: 0.9 },
  speaker: { pitch: 40, speed: 0.88 },
};

type Row = [n: number, name: string, gender: VoiceGender, age: VoiceAgeGroup, accent: VoiceAccent, style: VoiceStyle, variant?: string, pitch?: number];

// Fixed ids: clients store voice ids, so a re-seed must never change them.
const ROWS: readonly Row[] = [
  [1, 'Emma', 'female', 'young_adult', 'american', 'casual', 'f3'],
  [2, 'James', 'male', 'adult', 'american', 'professional', 'm3'],
  [3, 'Olivia', 'female', 'adult', 'american', 'professional', 'f2'],
  [4, 'Jake', 'male', 'young_adult', 'american', 'energetic', 'm7'],
  [5, 'Ruth', 'female', 'senior', 'american', 'speaker', 'f1'],
  [6, 'Max', 'male', 'kid', 'american', 'energetic', 'm3', 92],
  [7, 'Lily', 'female', 'kid', 'american', 'casual', 'f5', 90],
  [8, 'Charlotte', 'female', 'adult', 'british', 'professional', 'f4'],
  [9, 'Oliver', 'male', 'adult', 'british', 'speaker', 'm2'],
  [10, 'Harry', 'male', 'young_adult', 'british', 'casual', 'm5'],
  [11, 'Arthur', 'male', 'senior', 'british', 'professional', 'm1'],
  [12, 'Chloé', 'female', 'young_adult', 'french', 'casual', 'f3'],
  [13, 'Antoine', 'male', 'adult', 'french', 'professional', 'm4'],
  [14, 'Freja', 'female', 'adult', 'danish', 'professional', 'f2'],
  [15, 'Mads', 'male', 'young_adult', 'danish', 'energetic', 'm6'],
  [16, 'Astrid', 'female', 'young_adult', 'swedish', 'energetic', 'f4'],
  [17, 'Erik', 'male', 'adult', 'swedish', 'casual', 'm2'],
  [18, 'Lena', 'female', 'adult', 'german', 'speaker', 'f2'],
  [19, 'Lukas', 'male', 'adult', 'german', 'professional', 'm3'],
  [20, 'Ingrid', 'female', 'senior', 'norwegian', 'casual', 'f1'],
  [21, 'Ole', 'male', 'adult', 'norwegian', 'professional', 'm4'],
  [22, 'Lucía', 'female', 'young_adult', 'spanish', 'energetic', 'f5'],
  [23, 'Javier', 'male', 'adult', 'spanish', 'speaker', 'm5'],
  [24, 'Alex', 'other', 'adult', 'neutral', 'professional', 'f4', 32],
  [25, 'Sam', 'other', 'young_adult', 'neutral', 'casual', 'm7', 70],
  [26, 'Nova', 'female', 'young_adult', 'neutral', 'whisper', 'whisperf'],
  [27, 'Eli', 'male', 'adult', 'neutral', 'whisper', 'whisper'],
  [28, 'Morgan', 'other', 'senior', 'neutral', 'speaker', 'f4', 22],
  [29, 'Grace', 'female', 'senior', 'british', 'whisper', 'whisperf', 38],
  [30, 'Walter', 'male', 'senior', 'american', 'casual', 'm1'],
];

export const voiceUuid = (n: number) => `3d2b7c10-6a4e-4f1b-8c55-a9e0d4c1${n.toString(16).padStart(4, '0')}`;

export const VOICES: readonly CatalogueVoice[] = ROWS.map(([n, name, gender, age_group, accent, style, variant, pitch]) => {
  const delivery = STYLE_DELIVERY[style];
  return {
    id: voiceUuid(n),
    name,
    gender,
    age_group,
    accent,
    style,
    espeak: {
      language: ACCENT_LANGUAGE[accent],
      ...(variant ? { variant } : {}),
      pitch: pitch ?? delivery.pitch,
      speed: age_group === 'senior' ? Math.min(delivery.speed, 0.9) : delivery.speed,
    },
  };
});

/** The sentence each voice reads for its preview, in its own language. */
export const PREVIEW_TEXT: Readonly<Record<string, string>> = {
  'en-us': 'Hi! This is how I sound in your next ad.',
  'en-gb': 'Hello! This is how I sound in your next advert.',
  'fr-fr': 'Bonjour ! Voici ma voix pour votre prochaine publicité.',
  da: 'Hej! Sådan lyder jeg i din næste reklame.',
  sv: 'Hej! Så här låter jag i din nästa reklam.',
  de: 'Hallo! So klinge ich in Ihrer nächsten Werbung.',
  nb: 'Hei! Slik høres jeg ut i din neste reklame.',
  es: '¡Hola! Así sueno en tu próximo anuncio.',
};
