/*
 * Our requests in HeyGen's terms, per the request schemas heygen-com/heygen-cli generates from
 * HeyGen's OpenAPI (gen/video.go CreateVideoFromImage: type "image", image and audio as
 * {type: "url" | "asset_id" | "base64"}, aspect_ratio 16:9 | 9:16 | 4:5 | 5:4 | 1:1 | auto,
 * resolution 4k | 1080p | 720p; gen/video-translate.go: video, output_languages as HeyGen's
 * language names, mode speed | precision, speaker_num, translate_audio_only,
 * enable_dynamic_duration) and heygen-com/skills-legacy skills/faceswap/SKILL.md (POST
 * /v1/workflows/executions {workflow_type: "FaceswapNode", input {source_image_url, target_video_url}}).
 */
export const HEYGEN_OPERATIONS = ['talking-avatar', 'localize', 'swap-avatar'] as const;

/** Talking avatars have no size in the spec; portrait HD, like the local engine, suits ad placements. */
export const TALKING_AVATAR_FORMAT = { aspect_ratio: '9:16', resolution: '720p' } as const;

/**
 * Our language codes to HeyGen's language names (GET /v3/video-translations/languages lists
 * them); a bare language takes the variant heygen-com/skills' language guide defaults to.
 * HEYGEN_LANGUAGES adds or replaces entries.
 */
export const HEYGEN_DEFAULT_LANGUAGES: Readonly<Record<string, string>> = {
  en: 'English (United States)',
  'en-us': 'English (United States)',
  'en-gb': 'English (United Kingdom)',
  es: 'Spanish (Spain)',
  'es-es': 'Spanish (Spain)',
  'es-mx': 'Spanish (Mexico)',
  fr: 'French (France)',
  'fr-ca': 'French (Canada)',
  de: 'German (Germany)',
  it: 'Italian (Italy)',
  pt: 'Portuguese (Portugal)',
  'pt-pt': 'Portuguese (Portugal)',
  'pt-br': 'Portuguese (Brazil)',
  nl: 'Dutch (Netherlands)',
  pl: 'Polish (Poland)',
  sv: 'Swedish (Sweden)',
  da: 'Danish (Denmark)',
  nb: 'Norwegian Bokmål (Norway)',
  no: 'Norwegian Bokmål (Norway)',
  fi: 'Finnish (Finland)',
  ru: 'Russian (Russia)',
  uk: 'Ukrainian (Ukraine)',
  tr: 'Turkish (Turkey)',
  ar: 'Arabic',
  hi: 'Hindi (India)',
  ja: 'Japanese (Japan)',
  ko: 'Korean (Korea)',
  zh: 'Chinese (Mandarin, Simplified)',
  'zh-cn': 'Chinese (Mandarin, Simplified)',
  'zh-hans': 'Chinese (Mandarin, Simplified)',
  'zh-tw': 'Chinese (Mandarin, Traditional)',
  'zh-hant': 'Chinese (Mandarin, Traditional)',
  'zh-hk': 'Chinese (Cantonese, Traditional)',
  yue: 'Chinese (Cantonese, Traditional)',
};

/** HeyGen's name for a language code: the whole code first, then its language alone. */
export function heygenLanguage(code: string, table: Readonly<Record<string, string>>): string | undefined {
  const c = code.toLowerCase();
  return table[c] ?? table[c.split('-')[0]!];
}

export function heygenRefusal(operation: string, params: Record<string, unknown>, languages: Readonly<Record<string, string>>): string | undefined {
  if (!(HEYGEN_OPERATIONS as readonly string[]).includes(operation)) {
    return `${operation} is not served by the HeyGen engine of this version (it serves ${HEYGEN_OPERATIONS.join(', ')})`;
  }
  if (operation === 'talking-avatar' && params.lipsync_model !== 'heygen-avatar4') {
    return `lipsync_model: ${String(params.lipsync_model)} is not HeyGen's; HeyGen animates heygen-avatar4`;
  }
  if (operation === 'localize' && !heygenLanguage(String(params.output_language), languages)) {
    return `output_language: HeyGen has no language for ${String(params.output_language)} here (known: ${Object.keys(languages).join(', ')}; HEYGEN_LANGUAGES adds more)`;
  }
  return undefined;
}

/** POST /v3/video-translations, field by field. */
export function translationBody(params: Record<string, unknown>, videoUrl: string, language: string, title: string): Record<string, unknown> {
  const body: Record<string, unknown> = { video: { type: 'url', url: videoUrl }, output_languages: [language], mode: params.mode, title };
  if (params.speaker_num !== undefined) body.speaker_num = params.speaker_num;
  if (params.translate_audio_only !== undefined) body.translate_audio_only = params.translate_audio_only;
  if (params.enable_dynamic_duration !== undefined) body.enable_dynamic_duration = params.enable_dynamic_duration;
  return body;
}
