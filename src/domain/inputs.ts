import { z } from 'zod';
import { TIERS } from './tiers.ts';

// Lengths the spec leaves open ("not shown"); ours, listed in docs/api-notes.md.
export const MAX = {
  productName: 200,
  productDescription: 5000,
  productCategory: 100,
  url: 2048,
  avatarName: 50,
  avatarDescription: 500,
  brandText: 2000,
  /** An ISO 4217 code is 3 letters; room for spaces around it. */
  currency: 16,
  /** `#1A2B3C`, with room for spaces around it. */
  hexColor: 16,
} as const;

const ISO_4217 = new Set(Intl.supportedValuesOf('currency'));

/**
 * A string of at most `max` Unicode characters as sent (counted before any trim, as JSON Schema
 * counts), stated to the OpenAPI document as its maxLength: what the document declares is what
 * is refused. Trims, empties and formats are checked after it.
 */
export const chars = (max: number, base: z.ZodString = z.string()) =>
  base.refine((s) => [...s].length <= max, { message: `must be at most ${max} characters`, abort: true }).meta({ maxLength: max });

const text = (max: number) => chars(max).trim().min(1, 'must not be empty');

export const httpUrl = chars(MAX.url)
  .trim()
  .pipe(z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }));

/** An upload of the caller's team, named where a URL is taken (src/domain/uploads.ts). */
const UPLOAD_REFERENCE = /^upload:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const HTTP_URL = z.url({ protocol: /^https?$/ });

/**
 * A field whose file is fetched as an input: an http(s) URL, or `upload:<id>` naming one of the
 * team's uploads (read from storage, never from the network). The id comes out in lower case.
 */
export const inputUrl = chars(MAX.url)
  .trim()
  .refine((s) => UPLOAD_REFERENCE.test(s) || HTTP_URL.safeParse(s).success, 'must be an http(s) URL or an upload reference upload:<id>')
  .transform((s) => (s.startsWith('upload:') ? s.toLowerCase() : s))
  .meta({
    pattern: '^\\s*(?:[Hh][Tt][Tt][Pp][Ss]?:|upload:)',
    description: 'An http(s) URL the service downloads, or `upload:<id>` naming a file of your team uploaded with POST /uploads.',
  });

const queryInt = (min: number, max: number, dflt: number) =>
  z
    .string()
    .regex(/^\d{1,10}$/, `must be an integer between ${min} and ${max}`)
    .transform(Number)
    .pipe(z.number().min(min, `must be an integer between ${min} and ${max}`).max(max, `must be an integer between ${min} and ${max}`))
    .default(dflt)
    // As a document states a query integer (the text of one is what arrives).
    .meta({ type: 'integer', minimum: min, maximum: max, default: dflt, pattern: undefined });

/** A query's point in time: an ISO 8601 date-time with its offset, read as a Date. */
export const instant = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-11-01T00:00:00Z' })
  .refine((s) => s.length <= 64, 'must be at most 64 characters')
  .meta({ maxLength: 64 })
  .transform((s) => new Date(s));

export const pageQuery = z.object({
  limit: queryInt(1, 100, 20),
  offset: queryInt(0, 1_000_000_000, 0),
});
export type Page = z.output<typeof pageQuery>;

export const uuid = z.uuid({ message: 'must be a UUID' }).meta({ maxLength: 36 });

export const productCreate = z.object({
  name: text(MAX.productName),
  description: text(MAX.productDescription),
  category: text(MAX.productCategory),
  image_url: inputUrl,
  price: z
    .number()
    .finite()
    .min(0, 'must not be negative')
    // The column holds 12 digits before the point and 2 after: anything that rounds past it is refused here.
    .max(999_999_999_999.99, 'must be at most 999999999999.99')
    .nullish(),
  currency: chars(MAX.currency)
    .trim()
    .transform((c) => c.toUpperCase())
    .refine((c) => ISO_4217.has(c), 'must be an ISO 4217 currency code, e.g. USD')
    .nullish()
    .transform((c) => c ?? 'USD'),
  link: httpUrl.nullish(),
});

export const customAvatarCreate = z.object({
  name: text(MAX.avatarName),
  image_url: inputUrl,
  description: chars(MAX.avatarDescription).trim().nullish(),
  gender: z.enum(['male', 'female']).nullish(),
  age_group: z.enum(['kid', 'young_adult', 'adult', 'senior']).nullish(),
});

const hexColor = chars(MAX.hexColor).trim().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'must be a hex colour like #1A2B3C');
const optionalText = chars(MAX.brandText).trim().nullish();

export const brandCreate = z.object({
  name: text(MAX.productName),
  description: optionalText,
  industry: optionalText,
  website_url: httpUrl.nullish(),
  brand_voice: optionalText,
  target_audience: optionalText,
  brand_color_primary: hexColor.nullish(),
  brand_color_accent: hexColor.nullish(),
  logo_url: inputUrl.nullish(),
  reference_image_url: inputUrl.nullish(),
});

/** Every field optional; `name` may change but not be cleared. */
export const brandUpdate = brandCreate.partial().extend({ name: text(MAX.productName).optional() });

export const teamCreate = z.object({
  name: text(200),
  tier: z.enum(TIERS).default('starter'),
  credits_limit: z.number().int().min(0).max(2_000_000_000).optional(),
});

export const creditsLimit = z.number().int().min(0).max(2_000_000_000);
