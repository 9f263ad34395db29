/** What an upload holds, by its sniffed bytes. */
export type UploadKind = 'image' | 'video' | 'audio';

export const UPLOAD_PREFIX = 'upload:';

/** The upload id a field's value names, or null when it is a URL. */
export const uploadIdOf = (value: string): string | null => (value.startsWith(UPLOAD_PREFIX) ? value.slice(UPLOAD_PREFIX.length).toLowerCase() : null);

export const uploadReference = (id: string): string => `${UPLOAD_PREFIX}${id}`;

/** The kinds of upload a URL field takes: a video field a video, an audio field audio or a video's sound track, every other an image. */
export function kindsForField(field: string): readonly UploadKind[] {
  const name = field.replace(/\[\d+\]$/, '');
  if (name === 'video_url') return ['video'];
  if (name === 'audio_url') return ['audio', 'video'];
  return ['image'];
}

export interface UploadUse {
  /** The field as a message names it: `reference_image_urls[2]`. */
  field: string;
  id: string;
  kinds: readonly UploadKind[];
}

/** Every `upload:<id>` in a checked body's URL fields (`*_url`, `*_urls`), with what each field takes. */
export function uploadUses(params: unknown): UploadUse[] {
  if (!params || typeof params !== 'object') return [];
  const uses: UploadUse[] = [];
  for (const [key, value] of Object.entries(params as Record<string, unknown>)) {
    if (!/_urls?$/.test(key)) continue;
    const values = Array.isArray(value) ? value.map((v, i) => [`${key}[${i}]`, v] as const) : [[key, value] as const];
    for (const [field, v] of values) {
      const id = typeof v === 'string' ? uploadIdOf(v) : null;
      if (id) uses.push({ field, id, kinds: kindsForField(field) });
    }
  }
  return uses;
}
