import { z } from 'zod';
import { ANY_RATIO, parseAspectRatio } from './aspect-ratio.ts';
import { AppError } from './errors.ts';
import {
  boolWithDefault,
  GENERATION_MAX,
  lowerUuid,
  optional,
  orList,
  productIds,
  requiredEnum,
  requiredText,
  requiredUuid,
  whole,
  withDefault,
} from './generation-fields.ts';
import { IMAGE_EFFORTS, IMAGE_MODELS, IMAGE_RESOLUTIONS } from './generation-types.ts';
import type { ImageEffort, ImageModel, ImageResolution } from './generation-types.ts';
import { chars, inputUrl } from './inputs.ts';

export const MAX_REFERENCE_IMAGES = 5;

/** Which efforts each image model takes: the create form offers only these. */
export const EFFORTS_BY_MODEL: Readonly<Record<ImageModel, readonly ImageEffort[]>> = {
  fast: [],
  pro: [],
  'gpt-2': ['low', 'medium', 'high'],
  'gpt-2.5': ['low', 'medium', 'high', 'xhigh', 'max'],
};
const GPT_MODELS = IMAGE_MODELS.filter((m) => EFFORTS_BY_MODEL[m].length > 0);

export type ImageSharedParams = {
  model: ImageModel;
  /** GPT models only, default medium; absent on fast and pro. */
  effort?: ImageEffort;
  /** True only on gpt-2.5. */
  fast: boolean;
  aspect_ratio: string;
  quantity: number;
  resolution: ImageResolution;
};

const sharedShape = {
  model: requiredEnum(IMAGE_MODELS),
  effort: optional(requiredEnum(IMAGE_EFFORTS)),
  fast: boolWithDefault(false),
  aspect_ratio: chars(GENERATION_MAX.shortWord, z.string({ error: (i) => (i.input === undefined ? 'is required' : `must be ${ANY_RATIO}`) }))
    .trim()
    .refine((r) => parseAspectRatio(r) !== null, `must be ${ANY_RATIO}`),
  quantity: withDefault(whole(1, 8), 1),
  resolution: withDefault(requiredEnum(IMAGE_RESOLUTIONS), '1k'),
};

type SharedRaw = z.output<z.ZodObject<typeof sharedShape>>;

function shared(v: SharedRaw, ctx: z.core.$RefinementCtx): ImageSharedParams {
  const efforts = EFFORTS_BY_MODEL[v.model];
  if (v.effort && efforts.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['effort'],
      message: `only GPT models (${orList(GPT_MODELS, 'and')}) take effort; ${v.model} does not`,
    });
  } else if (v.effort && !efforts.includes(v.effort)) {
    ctx.addIssue({ code: 'custom', path: ['effort'], message: `${v.model} takes ${orList(efforts)}` });
  }
  if (v.fast && v.model !== 'gpt-2.5') {
    ctx.addIssue({ code: 'custom', path: ['fast'], message: `only gpt-2.5 takes fast; ${v.model} does not` });
  }
  const out: ImageSharedParams = {
    model: v.model,
    fast: v.fast,
    aspect_ratio: v.aspect_ratio,
    quantity: v.quantity,
    resolution: v.resolution,
  };
  if (efforts.length > 0) out.effort = v.effort ?? 'medium';
  return out;
}

// ---- POST /images/text-to-image ------------------------------------------------------------------------------------

export type TextToImageParams = ImageSharedParams & { prompt: string; brand_id?: string; product_ids: string[] };

export const textToImageInput = z
  .object({
    ...sharedShape,
    prompt: requiredText(GENERATION_MAX.prompt),
    brand_id: optional(lowerUuid),
    product_ids: productIds,
  })
  .transform((v, ctx): TextToImageParams => {
    const out: TextToImageParams = { ...shared(v, ctx), prompt: v.prompt, product_ids: v.product_ids };
    if (v.brand_id) out.brand_id = v.brand_id;
    return ctx.issues.length > 0 ? z.NEVER : out;
  });

// ---- POST /images/product-shots ------------------------------------------------------------------------------------

export type ProductShotsParams = ImageSharedParams & {
  product_id: string;
  style_id: string;
  additional_prompt?: string;
};

export const productShotsInput = z
  .object({
    ...sharedShape,
    product_id: requiredUuid,
    style_id: requiredText(GENERATION_MAX.styleId),
    // Blank guidance is no guidance: dropped rather than refused.
    additional_prompt: optional(chars(GENERATION_MAX.additionalPrompt, z.string({ error: 'must be a string' })).trim()),
  })
  .transform((v, ctx): ProductShotsParams => {
    const out: ProductShotsParams = { ...shared(v, ctx), product_id: v.product_id, style_id: v.style_id };
    if (v.additional_prompt) out.additional_prompt = v.additional_prompt;
    return ctx.issues.length > 0 ? z.NEVER : out;
  });

// ---- POST /images/edit ---------------------------------------------------------------------------------------------

export type ImageEditParams = ImageSharedParams & {
  prompt: string;
  reference_image_urls: string[];
  brand_id?: string;
  product_ids: string[];
};

export const imageEditInput = z
  .object({
    ...sharedShape,
    prompt: requiredText(GENERATION_MAX.prompt),
    reference_image_urls: z
      .array(inputUrl, {
        error: (i) => (i.input === undefined ? 'is required' : 'must be an array of http(s) URLs or upload references'),
      })
      // Only a bound on the list itself here: the cap counts images from every source, so checkReferenceImageTotal names each count.
      .min(1, 'must list at least 1 URL')
      .max(GENERATION_MAX.urlList, `must list at most ${GENERATION_MAX.urlList} URLs`),
    brand_id: optional(lowerUuid),
    product_ids: productIds,
  })
  .transform((v, ctx): ImageEditParams => {
    const out: ImageEditParams = {
      ...shared(v, ctx),
      prompt: v.prompt,
      reference_image_urls: v.reference_image_urls,
      product_ids: v.product_ids,
    };
    if (v.brand_id) out.brand_id = v.brand_id;
    return ctx.issues.length > 0 ? z.NEVER : out;
  });

// ---- Checks and sizes that need more than the body -----------------------------------------------------------------

/**
 * The image-edit cap counts images, not ids: the caller resolves brand and products first
 * (a brand gives up to 2: logo and reference image) and passes how many each gave.
 */
export function checkReferenceImageTotal(counts: { urls: number; brand: number; products: number }): void {
  const total = counts.urls + counts.brand + counts.products;
  if (total <= MAX_REFERENCE_IMAGES) return;
  throw new AppError(
    'validation_error',
    `reference images: ${total} in total (${counts.urls} from reference_image_urls, ${counts.brand} from brand_id, ` +
      `${counts.products} from product_ids); at most ${MAX_REFERENCE_IMAGES} are allowed`,
  );
}

export const IMAGE_LONG_SIDE: Readonly<Record<ImageResolution, number>> = { '1k': 1024, '2k': 2048, '4k': 4096 };

/** The long side is the resolution's size; the short side follows the ratio, rounded to a whole pixel. */
export function imageSize(aspectRatio: string, resolution: ImageResolution): { width: number; height: number } {
  const ratio = parseAspectRatio(aspectRatio);
  if (!ratio) throw new RangeError(`not an aspect ratio: ${JSON.stringify(aspectRatio)}`);
  const long = IMAGE_LONG_SIDE[resolution];
  const short = Math.round((long * Math.min(ratio.width, ratio.height)) / Math.max(ratio.width, ratio.height));
  return ratio.width >= ratio.height ? { width: long, height: short } : { width: short, height: long };
}
