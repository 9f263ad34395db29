import { z } from 'zod';
import { chars, inputUrl, MAX, uuid } from './inputs.ts';

// Lengths the spec leaves open; ours, listed in docs/api-notes.md.
export const GENERATION_MAX = {
  prompt: 5000,
  script: 5000,
  voiceId: 200,
  templateId: 100,
  styleId: 100,
  additionalPrompt: 2000,
  productIds: 3,
  /** Entries of product_ids as sent (duplicates are dropped, then at most productIds remain). */
  productIdEntries: 10,
  /** A language code (`es`, `pt-BR`, `zh-Hans-CN`), with room for spaces around it. */
  languageCode: 35,
  /** An aspect ratio (`16:9`) or a resolution (`1080p`), with room for spaces around it. */
  shortWord: 16,
  // A bound on the array itself so a huge list is refused before any per-model rule looks at it.
  urlList: 20,
} as const;

/** 'a', 'a or b', 'a, b or c': messages read as English. */
export function orList(items: readonly (string | number)[], last = 'or'): string {
  const words = items.map(String);
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1)}`;
}

const missingOr = (otherwise: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : otherwise;

export const requiredText = (max: number) =>
  chars(max, z.string({ error: missingOr('must be a string') }))
    .trim()
    .min(1, 'must not be empty');

export const requiredEnum = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: missingOr(`must be one of ${orList(values)}`) });

/** Absent and null are the same to clients that serialise every key; both come out as undefined. */
export const optional = <S extends z.ZodType>(schema: S) =>
  schema.nullish().transform((v): z.output<S> | undefined => v ?? undefined);

export const withDefault = <S extends z.ZodType>(schema: S, fallback: z.output<S>) =>
  schema.nullish().transform((v): z.output<S> => v ?? fallback);

// UUIDs are compared as text downstream (dedupe, lookups), so one spelling.
export const lowerUuid = uuid.transform((s) => s.toLowerCase());
export const requiredUuid = chars(36, z.string({ error: missingOr('must be a UUID') }))
  .pipe(uuid)
  .transform((s) => s.toLowerCase());

export const requiredUrl = chars(MAX.url, z.string({ error: missingOr('must be an http(s) URL or an upload reference upload:<id>') })).pipe(inputUrl);

export const urlList = z
  .array(inputUrl, { error: 'must be an array of http(s) URLs or upload references' })
  .max(GENERATION_MAX.urlList, `must list at most ${GENERATION_MAX.urlList} URLs`);

/** Duplicates are dropped before counting: naming a product twice attaches it once. */
export const productIds = withDefault(
  z
    .array(lowerUuid, { error: 'must be an array of UUIDs' })
    .max(GENERATION_MAX.productIdEntries, `must list at most ${GENERATION_MAX.productIdEntries} entries`)
    .transform((ids) => [...new Set(ids)])
    .refine((ids) => ids.length <= GENERATION_MAX.productIds, `must list at most ${GENERATION_MAX.productIds} products`),
  [],
);

export const boolWithDefault = (fallback: boolean) =>
  withDefault(z.boolean({ error: 'must be true or false' }), fallback);

export const whole = (min: number, max: number) =>
  z
    .number({ error: missingOr(`must be a whole number from ${min} to ${max}`) })
    .int(`must be a whole number from ${min} to ${max}`)
    .min(min, `must be a whole number from ${min} to ${max}`)
    .max(max, `must be a whole number from ${min} to ${max}`);

export const seconds = (min: number, max: number) =>
  z
    .number({ error: missingOr(`must be a number of seconds from ${min} to ${max}`) })
    .min(min, `must be a number of seconds from ${min} to ${max}`)
    .max(max, `must be a number of seconds from ${min} to ${max}`);

/** Pixel sizes: bounded so a typo cannot ask an engine for a gigapixel frame. */
export const pixels = whole(16, 4096);

// language[-Script][-REGION]: 'es', 'pt-BR', 'es-419', 'zh-Hans-CN'. Case-insensitive in, canonical case out.
const LANGUAGE = /^([a-z]{2,3})(?:-([a-z]{4}))?(?:-([a-z]{2}|\d{3}))?$/i;

export const languageCode = chars(GENERATION_MAX.languageCode, z.string({ error: missingOr('must be a language code like es or pt-BR') }))
  .trim()
  .regex(LANGUAGE, 'must be a language code like es or pt-BR')
  .transform((code) => {
    const [, lang = '', script, region] = LANGUAGE.exec(code) ?? [];
    const parts = [lang.toLowerCase()];
    if (script) parts.push(script[0]!.toUpperCase() + script.slice(1).toLowerCase());
    if (region) parts.push(region.toUpperCase());
    return parts.join('-');
  });
