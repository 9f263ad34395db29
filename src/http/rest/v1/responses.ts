import { z } from 'zod';
import { errorStatus } from '../../../domain/errors.ts';
import { GENERATION_STATUSES } from '../../../domain/generation-types.ts';
import { VOICE_ACCENTS, VOICE_AGE_GROUPS, VOICE_GENDERS, VOICE_STYLES } from '../../../domain/voiceover-inputs.ts';

// What /api/v1 answers, as the OpenAPI document states it and the e2e suite checks every answer
// against. Field notes are the spec's ("Resources and their fields").

const id = z.uuid().meta({ example: '3f1c2a9e-7b4d-4e21-9a0f-5c6d7e8f9a0b' });
const timestamp = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 timestamp' });
const signedUrl = z.string().meta({ description: 'A presigned link, valid for 1 hour; each read signs a fresh one' });

export const idParams = z.object({ id: z.string().max(36).meta({ description: 'UUID' }) });

export const errorSchema = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(errorStatus) as [keyof typeof errorStatus, ...(keyof typeof errorStatus)[]]),
      message: z.string().meta({ description: 'What was wrong, naming the field where there is one' }),
    }),
  })
  .meta({ id: 'Error' });

export const page = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    pagination: z.object({ total: z.int().min(0), limit: z.int().min(1), offset: z.int().min(0) }),
  });

export const productSchema = z
  .object({
    id,
    name: z.string(),
    description: z.string(),
    category: z.string(),
    image_url: signedUrl,
    price: z.number().nullable(),
    currency: z.string().meta({ description: 'ISO 4217 code, default USD' }),
    link: z.string().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Product' });

export const productCreated = productSchema
  .omit({ image_url: true })
  .extend({ image_path: signedUrl })
  .meta({ id: 'ProductCreated', description: 'A product as the create answers it: its image under `image_path`' });

export const brandSchema = z
  .object({
    id,
    name: z.string(),
    description: z.string(),
    industry: z.string(),
    website_url: z.string().nullable(),
    brand_voice: z.string().nullable().meta({ description: 'tone of voice' }),
    target_audience: z.string().nullable(),
    brand_color_primary: z.string().nullable().meta({ description: 'hex code' }),
    brand_color_accent: z.string().nullable().meta({ description: 'hex code' }),
    logo_url: z.string().nullable(),
    reference_image_url: z.string().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Brand' });

const avatarFields = {
  id,
  name: z.string(),
  thumbnail_url: signedUrl,
  gender: z.enum(['male', 'female']).nullable(),
  age_group: z.string().nullable(),
};
export const platformAvatarSchema = z.object({ ...avatarFields, avatar_type: z.literal('platform') }).meta({ id: 'PlatformAvatar' });
export const customAvatarSchema = z
  .object({ ...avatarFields, avatar_type: z.literal('custom'), description: z.string().nullable(), created_at: timestamp })
  .meta({ id: 'CustomAvatar' });

const generationSummaryFields = {
  id,
  type: z.string().meta({ description: 'talking-avatar, ai-video, swap-avatar, localize, edit, text-to-image, product-shots or image-edit' }),
  status: z.enum(GENERATION_STATUSES),
  created_at: timestamp,
  completed_at: timestamp.nullable(),
  result_url: signedUrl.nullable().meta({ description: 'null while processing or failed' }),
  result_urls: z.array(signedUrl).meta({ description: 'every result (several images when quantity > 1)' }),
  error: z.string().nullable(),
  files_expired_at: timestamp
    .nullable()
    .meta({ description: "when the team's retention period removed the stored files: result_url is then null and result_urls empty, while status, error and details stay as they were; null while the files are kept" }),
};
export const generationSummarySchema = z.object(generationSummaryFields).meta({ id: 'GenerationSummary' });
export const generationSchema = z
  .object({
    ...generationSummaryFields,
    generation_id: id,
    credits: z.int().min(0),
    details: z.record(z.string(), z.unknown()).meta({ description: "The request as stored, the spec's keys for its type first" }),
  })
  .meta({ id: 'Generation' });

export const generationCreated = z
  .object({ generation_id: id, type: z.string(), status: z.literal('processing') })
  .meta({ id: 'GenerationCreated' });

export const creditBalanceSchema = z
  .object({
    credits_used: z.int().meta({ description: 'consumed in the current billing period' }),
    credits_limit: z.int().meta({ description: 'total for the subscription tier' }),
    credits_remaining: z.int().meta({ description: 'credits_limit - credits_used' }),
  })
  .meta({ id: 'CreditBalance' });

export const voiceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    gender: z.enum(VOICE_GENDERS),
    age_group: z.enum(VOICE_AGE_GROUPS),
    accent: z.enum(VOICE_ACCENTS),
    style: z.enum(VOICE_STYLES),
    preview_audio_url: z.string(),
  })
  .meta({ id: 'Voice' });

export const voiceoverSchema = z
  .object({ id, status: z.literal('completed'), duration: z.number().meta({ description: 'seconds' }), audio_url: signedUrl })
  .meta({ id: 'Voiceover' });

export const styleSchema = z
  .object({ id: z.string(), name: z.string(), description: z.string(), prompt: z.string(), background: z.string(), accent: z.string() })
  .meta({ id: 'StyleTemplate' });

export const captionTemplateSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    font_size: z.number(),
    color: z.string(),
    highlight_color: z.string(),
    position: z.enum(['top', 'center', 'bottom']),
    uppercase: z.boolean(),
  })
  .meta({ id: 'CaptionTemplate' });

export const adLibraryBrandSchema = z
  .object({
    id,
    name: z.string(),
    meta_page_id: z.string(),
    page_url: z.string(),
    about: z.string(),
    profile_picture_url: signedUrl.nullable(),
    page_categories: z.array(z.string()),
    page_like_count: z.int(),
    created_at: timestamp,
  })
  .meta({ id: 'AdLibraryBrand' });

const adFields = {
  id,
  brand_id: id,
  ad_archive_id: z.string(),
  is_active: z.boolean(),
  start_date: z.string(),
  end_date: z.string().nullable(),
  body_text: z.string(),
  title: z.string(),
  cta_text: z.string(),
  cta_type: z.string(),
  link_url: z.string(),
  display_format: z.string(),
  publisher_platforms: z.array(z.string()),
  thumbnail_url: z.string(),
  eu_total_reach: z.int(),
  created_at: timestamp,
};
const mediaType = z.enum(['image', 'video']);
export const adListItemSchema = z
  .object({ ...adFields, media: z.array(z.object({ type: mediaType, url: z.string() })) })
  .meta({ id: 'AdLibraryAdListItem', description: "In lists media items carry the source's URL" });
export const adSchema = z
  .object({ ...adFields, media: z.array(z.object({ type: mediaType, r2_url: signedUrl.nullable() })) })
  .meta({ id: 'AdLibraryAd', description: 'The single-ad read gives our stored copy of each media item (`r2_url`)' });

export const scrapeStarted = z
  .object({ job_id: id, status: z.literal('processing') })
  .meta({ id: 'ScrapeStarted', description: 'A new scrape (or the one already running for this page)' });
export const scrapeExisting = z
  .object({ job_id: id.nullable(), status: z.literal('existing'), brand_id: id })
  .meta({ id: 'ScrapeExisting', description: 'Already scraped: answered at once, no job and no charge' });

export const scrapeJobSchema = z
  .object({
    job_id: id,
    status: z.enum(['processing', 'completed', 'failed']),
    meta_page_id: z.string(),
    brand_id: id.nullable(),
    ads_count: z.int().min(0),
    error: z.string().nullable(),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
  })
  .meta({ id: 'ScrapeJob' });

export const quoteSchema = z
  .object({
    credits: z.int().min(0).meta({ description: 'What the create of this body would charge' }),
    credits_remaining: z.int().meta({ description: "The team's balance now" }),
    affordable: z.boolean().meta({ description: 'credits <= credits_remaining: the create would pass its credits check now' }),
  })
  .meta({ id: 'Quote' });

export const ledgerLineSchema = z
  .object({
    id: z.string().meta({ description: 'Increasing in the order lines were written' }),
    kind: z.enum(['debit', 'refund', 'period_reset', 'limit_set']),
    amount: z.int().meta({ description: 'Credits: a debit is positive, a refund or a period reset negative, a limit change 0' }),
    generation_id: id.nullable().meta({ description: 'The generation a debit or refund is for' }),
    subject_type: z.string().nullable().meta({ description: 'generation, voiceover or ad_library_scrape' }),
    subject_id: id.nullable(),
    note: z.string().nullable(),
    created_at: timestamp,
    credits_used_after: z.int().meta({ description: 'credits_used once this line (and every line before it) counted' }),
  })
  .meta({ id: 'LedgerLine' });

export const webhookDeliverySchema = z
  .object({
    id,
    event: z.string().meta({ description: 'generation.completed, generation.failed or webhook.test' }),
    event_id: z.string().nullable().meta({ description: 'The id receivers drop duplicates by (X-Service-Event-Id, webhook-id); kept by a redelivery' }),
    generation_id: id.nullable().meta({ description: 'null for a test event' }),
    url: z.string(),
    attempted_at: timestamp,
    ok: z.boolean().meta({ description: 'The receiver answered 2xx in time' }),
    status_code: z.int().nullable().meta({ description: "The receiver's status, null when none came" }),
    error: z.string().nullable().meta({ description: 'Why the attempt failed (a status, a timeout, a refused address)' }),
    latency_ms: z.int().min(0),
    body: z.string().nullable().meta({ description: 'The exact JSON text sent (null for attempts recorded before bodies were kept)' }),
    redelivery_of: id.nullable().meta({ description: 'The attempt this one sent again' }),
  })
  .meta({ id: 'WebhookDelivery' });
