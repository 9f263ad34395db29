/*
 * What the bundled eSpeak NG (npm `espeak-ng`, eSpeak NG 1.52-dev) can speak, for a voice
 * catalogue to map accents, genders and ages onto. A voice is `language` plus an optional
 * `variant` (eSpeak's "+variant": a different speaker of the same language).
 */

/** Language codes with their names, as `espeak-ng --voices` lists them in this build. */
export const LANGUAGES: Readonly<Record<string, string>> = {
  // The accents an ad voiceover is most often asked for.
  'en-us': 'English (America)',
  'en-us-nyc': 'English (America, New York City)',
  'en-gb': 'English (Great Britain)',
  'en-gb-x-rp': 'English (Received Pronunciation)',
  'en-gb-scotland': 'English (Scotland)',
  'en-gb-x-gbclan': 'English (Lancaster)',
  'en-gb-x-gbcwmd': 'English (West Midlands)',
  'en-029': 'English (Caribbean)',
  'fr-fr': 'French (France)',
  'fr-be': 'French (Belgium)',
  'fr-ch': 'French (Switzerland)',
  de: 'German',
  es: 'Spanish (Spain)',
  'es-419': 'Spanish (Latin America)',
  da: 'Danish',
  sv: 'Swedish',
  nb: 'Norwegian Bokmål',
  nl: 'Dutch',
  it: 'Italian',
  pt: 'Portuguese (Portugal)',
  'pt-br': 'Portuguese (Brazil)',
  fi: 'Finnish',
  is: 'Icelandic',
  pl: 'Polish',
  ...Object.fromEntries(
    // The rest of the build's languages, code=name.
    ('af=Afrikaans am=Amharic an=Aragonese ar=Arabic as=Assamese az=Azerbaijani ba=Bashkir be=Belarusian bg=Bulgarian ' +
      'bn=Bengali bpy=Bishnupriya_Manipuri bs=Bosnian ca=Catalan cmn=Chinese_(Mandarin) cs=Czech cv=Chuvash cy=Welsh ' +
      'el=Greek eo=Esperanto et=Estonian eu=Basque fa=Persian ga=Irish_Gaelic gd=Scottish_Gaelic gn=Guarani ' +
      'gu=Gujarati hak=Hakka_Chinese haw=Hawaiian he=Hebrew hi=Hindi hr=Croatian ht=Haitian_Creole hu=Hungarian ' +
      'hy=Armenian id=Indonesian ja=Japanese ka=Georgian kk=Kazakh kl=Greenlandic kn=Kannada ko=Korean ' +
      'ku=Kurdish ky=Kyrgyz la=Latin lb=Luxembourgish lt=Lithuanian lv=Latvian mi=Māori mk=Macedonian ml=Malayalam ' +
      'mr=Marathi ms=Malay mt=Maltese my=Burmese ne=Nepali om=Oromo or=Oriya pa=Punjabi pap=Papiamento ' +
      'qu=Quechua ro=Romanian ru=Russian sd=Sindhi si=Sinhala sk=Slovak sl=Slovenian sq=Albanian sr=Serbian ' +
      'sw=Swahili ta=Tamil te=Telugu th=Thai tk=Turkmen tn=Setswana tr=Turkish tt=Tatar ug=Uyghur uk=Ukrainian ' +
      'ur=Urdu uz=Uzbek vi=Vietnamese yue=Chinese_(Cantonese)')
      .split(' ')
      .map((pair) => pair.split('=').map((s) => s.replaceAll('_', ' ')) as [string, string]),
  ),
};

export interface VoiceVariant {
  /** What goes after "+" (case matters). */
  id: string;
  gender: 'male' | 'female';
  /** The age eSpeak gives the variant, when it gives one. */
  age?: number;
  /** A sound effect rather than an ordinary speaker (whisper, robot...). */
  effect?: boolean;
}

const v = (gender: VoiceVariant['gender'], ids: string, extra: Partial<VoiceVariant> = {}): VoiceVariant[] =>
  ids.split(' ').map((id) => ({ id, gender, ...extra }));

/**
 * The variants that work in this build. Left out on purpose: those that need the Klatt
 * synthesizer, which this WASM build was compiled without (klatt*, adam, benjamin, caleb, david,
 * edward*, mike2, robosoft1-3, Reed, UniRobot, announcer: eSpeak warns and they sound wrong or
 * like the default), and "Mr serious" (a space in its name).
 */
export const VARIANTS: readonly VoiceVariant[] = [
  ...v('female', 'f2 f3 f4 f5 Alicia Andrea Annie anika aunty belinda linda steph steph2 steph3'),
  { id: 'f1', gender: 'female', age: 70 },
  { id: 'grandma', gender: 'female', age: 90 },
  ...v('male', 'm2 m3 m4 m5 m6 m7 Alex Andy Gene Gene2 Jacky Lee Mario Michael Mike Nguyen Storm antonio boris ed'),
  ...v('male', 'gustave ian iven iven2 iven3 iven4 john kaukovalta marcelo max norbert pablo paul pedro quincy rob'),
  ...v('male', 'robert sandro shelby zac grandpa'),
  { id: 'm1', gender: 'male', age: 70 },
  { id: 'm8', gender: 'male', age: 50 },
  { id: 'Denis', gender: 'male', age: 35 },
  { id: 'Marco', gender: 'male', age: 30 },
  { id: 'travis', gender: 'male', age: 30 },
  ...v('male', 'Diogo Henrique Hugo michel miguel victor', { age: 25 }),
  ...v('male', 'whisper Demonic Tweaky AnxiousAndy RicishayMax RicishayMax2 RicishayMax3', { effect: true }),
  ...v('male', 'robosoft4 robosoft5 robosoft6 robosoft7 robosoft8', { effect: true }),
  ...v('female', 'whisperf anikaRobot', { effect: true }),
  { id: 'croak', gender: 'male', age: 70, effect: true },
];

const variantIds = new Set(VARIANTS.map((x) => x.id));

/**
 * eSpeak finds "+variant" only after a voice's file name, and two of the codes above are aliases
 * of a file with another name: `en-gb+f3` would silently speak with the default male voice.
 */
const FILE_NAMES: Readonly<Record<string, string>> = { 'en-gb': 'en', 'fr-fr': 'fr' };

/** The `-v` argument for eSpeak: the language's voice file, plus the variant if any. */
export function espeakVoiceName(language: string, variant?: string): string {
  const file = FILE_NAMES[language] ?? language;
  return variant ? `${file}+${variant}` : file;
}

export function isLanguage(code: string): boolean {
  return Object.hasOwn(LANGUAGES, code);
}

export function isVariant(id: string): boolean {
  return variantIds.has(id);
}
