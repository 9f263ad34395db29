/*
 * Our requests in HeyGen's terms, held to test/contracts/heygen/ (HeyGen's OpenAPI as
 * heygen-com/heygen-cli's generated gen/*.go carries it, and heygen-com/skills-legacy
 * skills/faceswap/SKILL.md): POST /v3/videos CreateVideoFromImage (type "image", image and audio as
 * assets, aspect_ratio 16:9 | 9:16 | 4:5 | 5:4 | 1:1 | auto, resolution 4k | 1080p | 720p), POST
 * /v3/video-translations (video, output_languages as HeyGen's language names, mode speed |
 * precision, speaker_num, translate_audio_only, enable_dynamic_duration) and POST
 * /v1/workflows/executions {workflow_type: "FaceswapNode", input {source_image_url, target_video_url}}.
 * test/unit/heygen-map.test.ts holds every table here to those contracts.
 */
export const HEYGEN_OPERATIONS = ['talking-avatar', 'localize', 'swap-avatar'] as const;

/** Talking avatars have no size in the spec; portrait HD, like the local engine, suits ad placements. */
export const TALKING_AVATAR_FORMAT = { aspect_ratio: '9:16', resolution: '720p' } as const;

/** POST /v3/assets takes at most 32 MB (larger files need HeyGen's direct-upload flow). */
export const HEYGEN_ASSET_MAX_BYTES = 32 * 1024 * 1024;

/** The asset types adforge uploads, of those HeyGen takes (png, jpeg, mp4, webm, mp3, wav, pdf), detected from the bytes. */
export const HEYGEN_ASSET_TYPES = { image: ['image/png', 'image/jpeg'], audio: ['audio/mpeg', 'audio/wav'] } as const;

/**
 * A video waiting in HeyGen's queue, in each of HeyGen's words for it: `pending` (GET
 * /v3/videos/{id}), `waiting` (the create's answer, VideoCreate: "Initial video status (e.g.
 * 'waiting')"), `queued` (GET /v3/videos/statuses). A translation's queue is `pending`.
 */
export const HEYGEN_QUEUED_STATUSES: readonly string[] = ['pending', 'waiting', 'queued'];

/**
 * The statuses HeyGen documents besides completed and failed: the job is still queued or running.
 * A face swap (GET /v1/workflows/executions/{id}) documents completed, failed and not_found, and
 * HeyGen's own poller waits on any other status; so does ours.
 */
export const HEYGEN_WAITING_STATUSES = { video: [...HEYGEN_QUEUED_STATUSES, 'processing'], translation: ['pending', 'running'] } as const;

/** The API's own names for what a route may send to HeyGen: the request schema and the workflow node. */
export const HEYGEN_TALKING_AVATAR_TARGET = 'CreateVideoFromImage';
export const HEYGEN_SWAP_TARGET = 'FaceswapNode';

/**
 * Our language codes to HeyGen's language names, only names HeyGen's own documents spell out
 * (heygen-com/skills heygen-translate's language guide: see the languages contract); a bare
 * language takes the variant that guide defaults to. There is no bare `pt`: the guide says
 * Portugal and Brazil are never interchangeable. GET /v3/video-translations/languages lists many
 * more; HEYGEN_LANGUAGES adds or replaces entries, and `adforge providers check` verifies every
 * configured name against that list.
 */
export const HEYGEN_DEFAULT_LANGUAGES: Readonly<Record<string, string>> = {
  en: 'English (United States)',
  'en-us': 'English (United States)',
  es: 'Spanish (Spain)',
  'es-es': 'Spanish (Spain)',
  'es-mx': 'Spanish (Mexico)',
  'es-ar': 'Spanish (Argentina)',
  'es-co': 'Spanish (Colombia)',
  'es-us': 'Spanish (United States)',
  'es-419': 'Spanish (Latin America)',
  'pt-pt': 'Portuguese (Portugal)',
  'pt-br': 'Portuguese (Brazil)',
  fr: 'French (France)',
  'fr-fr': 'French (France)',
  'fr-ca': 'French (Canada)',
  de: 'German (Germany)',
  'de-de': 'German (Germany)',
  ar: 'Arabic',
  'ar-sa': 'Arabic (Saudi Arabia)',
  ja: 'Japanese (Japan)',
  'ja-jp': 'Japanese (Japan)',
  ko: 'Korean (Korea)',
  'ko-kr': 'Korean (Korea)',
  zh: 'Chinese (Mandarin, Simplified)',
  'zh-cn': 'Chinese (Mandarin, Simplified)',
  'zh-hans': 'Chinese (Mandarin, Simplified)',
  'zh-tw': 'Chinese (Taiwanese Mandarin, Traditional)',
  'zh-hant': 'Chinese (Taiwanese Mandarin, Traditional)',
  'zh-hk': 'Chinese (Cantonese, Traditional)',
  yue: 'Chinese (Cantonese, Traditional)',
  wuu: 'Chinese (Wu, Simplified)',
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

/** Every HeyGen name a route key of ours may send work to (`adforge providers check`). */
export function heygenTargets(routeKey: string, languages: Readonly<Record<string, string>>): string[] {
  const names = [...new Set(Object.values(languages))];
  switch (routeKey) {
    case 'heygen-avatar4':
    case 'talking-avatar':
      return [HEYGEN_TALKING_AVATAR_TARGET];
    case 'localize':
      return names;
    case 'swap-avatar':
      return [HEYGEN_SWAP_TARGET];
    case '*':
      return [HEYGEN_TALKING_AVATAR_TARGET, HEYGEN_SWAP_TARGET, ...names];
    default:
      // lipsync-2.0 and every other model: HeyGen refuses them at create, so nothing of HeyGen's is used.
      return [];
  }
}
