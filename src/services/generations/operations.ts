import type { z } from 'zod';
import type { Db } from '../../db/pool.ts';
import { AppError } from '../../domain/errors.ts';
import {
  aiVideoInput,
  checkReferenceImageTotal,
  imageEditInput,
  localizeInput,
  productShotsInput,
  swapAvatarInput,
  talkingAvatarInput,
  textToImageInput,
  videoEditInput,
} from '../../domain/generation-inputs.ts';
import { OPERATION_KINDS, type GenerationKind, type GenerationOperation, type GenerationType } from '../../domain/generation-types.ts';
import { priceOf, scriptLength, talkingAvatarCreditsForAudio } from '../../domain/pricing.ts';
import { findGeneration } from '../../repositories/generations.ts';
import { findProduct } from '../../repositories/products.ts';
import { findCaptionTemplate, findStyleTemplate } from '../../repositories/templates.ts';
import { findTeamVoiceover } from '../../repositories/voiceovers.ts';
import { requireVoice } from '../voices.ts';
import { ownBrandAndProducts, requireAvatar } from './references.ts';

/** What the create transaction needs once the ids in a request are checked against the database. */
export interface Resolved {
  type: GenerationType;
  params: Record<string, unknown>;
  credits: number;
  productIds: string[];
  avatarIds: string[];
  sourceGenerationId?: string;
  /** How many images the request attaches as references (URLs, the brand's, the products'): a provider may cap them. */
  attachedImages?: number;
}

export interface OperationSpec {
  operation: GenerationOperation;
  kind: GenerationKind;
  schema: z.ZodType;
  resolve: (db: Db, teamId: string, params: any) => Promise<Resolved>;
}

/** The request's params with only the team's own brand and products left in them. */
function withOwnReferences(params: Record<string, unknown>, own: Awaited<ReturnType<typeof ownBrandAndProducts>>): any {
  const { brand_id: _dropped, ...rest } = params;
  return own.brand ? { ...rest, brand_id: own.brand.id, product_ids: own.productIds } : { ...rest, product_ids: own.productIds };
}

const noLinks = { productIds: [] as string[], avatarIds: [] as string[] };

export const OPERATIONS: Record<GenerationOperation, OperationSpec> = {
  'talking-avatar': {
    operation: 'talking-avatar',
    kind: OPERATION_KINDS['talking-avatar'],
    schema: talkingAvatarInput,
    async resolve(db, teamId, params) {
      const links = await requireAvatar(db, teamId, params.avatar_type, params.avatar_id);
      if (params.voiceover_id) {
        // The voiceover wins over script + voice_id: what it says (and who says it) is what is stored.
        const vo = await findTeamVoiceover(db, teamId, params.voiceover_id);
        if (!vo) throw new AppError('not_found', 'Voiceover not found');
        const { script: _s, voice_id: _v, ...rest } = params;
        const credits = vo.text !== null ? priceOf('talking-avatar', { scriptLength: scriptLength(vo.text) }) : talkingAvatarCreditsForAudio(vo.duration_seconds);
        return { type: 'talking-avatar', params: { ...rest, ...(vo.text !== null ? { script: vo.text } : {}), voice_id: vo.voice_id }, credits, ...links };
      }
      const voice = await requireVoice(db, params.voice_id);
      return {
        type: 'talking-avatar',
        params: { ...params, voice_id: voice.id },
        credits: priceOf('talking-avatar', { scriptLength: scriptLength(params.script) }),
        ...links,
      };
    },
  },
  'ai-video': {
    operation: 'ai-video',
    kind: OPERATION_KINDS['ai-video'],
    schema: aiVideoInput,
    async resolve(db, teamId, params) {
      const own = await ownBrandAndProducts(db, teamId, params.brand_id, params.product_ids);
      const kept = withOwnReferences(params, own);
      const attachedImages = Number(!!params.reference_image_url) + params.reference_image_urls.length + (own.brand?.referenceImages ?? 0) + own.productIds.length;
      return { type: 'ai-video', params: kept, credits: priceOf('ai-video', kept), productIds: own.productIds, avatarIds: [], attachedImages };
    },
  },
  'swap-avatar': {
    operation: 'swap-avatar',
    kind: OPERATION_KINDS['swap-avatar'],
    schema: swapAvatarInput,
    async resolve(db, teamId, params) {
      const links = params.avatar_id ? await requireAvatar(db, teamId, params.avatar_type, params.avatar_id) : noLinks;
      return { type: 'swap-avatar', params, credits: priceOf('swap-avatar', params), ...links };
    },
  },
  localize: {
    operation: 'localize',
    kind: OPERATION_KINDS.localize,
    schema: localizeInput,
    async resolve(_db, _teamId, params) {
      return { type: 'localize', params, credits: priceOf('localize', params), ...noLinks };
    },
  },
  'video-edit': {
    operation: 'video-edit',
    kind: OPERATION_KINDS['video-edit'],
    schema: videoEditInput,
    async resolve(db, teamId, params) {
      const template = await findCaptionTemplate(db, params.template_id);
      if (!template) throw new AppError('not_found', 'Caption template not found');
      let sourceGenerationId: string | undefined;
      if (params.generation_id) {
        const src = await findGeneration(db, teamId, params.generation_id);
        if (!src) throw new AppError('not_found', 'Generation not found');
        if (src.type !== 'ai-video' || src.status !== 'completed') {
          throw new AppError('validation_error', 'generation_id: must be a completed ai-video generation');
        }
        if (src.files_expired_at) {
          throw new AppError('validation_error', "generation_id: its video was removed by the team's retention period (files_expired_at)");
        }
        sourceGenerationId = src.id;
      }
      return { type: 'edit', params, credits: priceOf('video-edit', {}), ...noLinks, ...(sourceGenerationId ? { sourceGenerationId } : {}) };
    },
  },
  'text-to-image': {
    operation: 'text-to-image',
    kind: OPERATION_KINDS['text-to-image'],
    schema: textToImageInput,
    async resolve(db, teamId, params) {
      const own = await ownBrandAndProducts(db, teamId, params.brand_id, params.product_ids);
      const kept = withOwnReferences(params, own);
      // The spec: references from the brand or products turn the request into an image edit.
      const references = (own.brand?.referenceImages ?? 0) + own.productIds.length;
      const type = references > 0 ? 'image-edit' : 'text-to-image';
      return { type, params: kept, credits: priceOf('text-to-image', kept), productIds: own.productIds, avatarIds: [] };
    },
  },
  'product-shots': {
    operation: 'product-shots',
    kind: OPERATION_KINDS['product-shots'],
    schema: productShotsInput,
    async resolve(db, teamId, params) {
      const product = await findProduct(db, teamId, params.product_id);
      if (!product) throw new AppError('not_found', 'Product not found');
      const style = await findStyleTemplate(db, params.style_id);
      if (!style) throw new AppError('not_found', 'Style not found');
      return { type: 'product-shots', params, credits: priceOf('product-shots', params), productIds: [product.id], avatarIds: [] };
    },
  },
  'image-edit': {
    operation: 'image-edit',
    kind: OPERATION_KINDS['image-edit'],
    schema: imageEditInput,
    async resolve(db, teamId, params) {
      const own = await ownBrandAndProducts(db, teamId, params.brand_id, params.product_ids);
      checkReferenceImageTotal({
        urls: params.reference_image_urls.length,
        brand: own.brand?.referenceImages ?? 0,
        products: own.productIds.length,
      });
      const kept = withOwnReferences(params, own);
      return { type: 'edit', params: kept, credits: priceOf('image-edit', kept), productIds: own.productIds, avatarIds: [] };
    },
  },
};
