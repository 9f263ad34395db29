import type { Db } from '../../db/pool.ts';
import { AppError } from '../../domain/errors.ts';
import { checkReferenceImageTotal } from '../../domain/image-inputs.ts';
import { GENERATION_OPERATIONS, type GenerationOperation, type GenerationType } from '../../domain/generation-types.ts';
import { GENERATION_OPERATION_TABLE, priceOf, type GenerationEntry } from '../../domain/operations.ts';
import { scriptLength, talkingAvatarCreditsForAudio } from '../../domain/pricing.ts';
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

/** Checks the ids a request names against the team's stored things, and prices what is kept. */
type Resolver = (db: Db, teamId: string, params: any) => Promise<Resolved>;

/** An operation's entry of the domain table with its resolver: what the create and the campaign check use. */
export interface OperationSpec extends GenerationEntry {
  operation: GenerationOperation;
  resolve: Resolver;
}

/** The request's params with only the team's own brand and products left in them. */
function withOwnReferences(params: Record<string, unknown>, own: Awaited<ReturnType<typeof ownBrandAndProducts>>): any {
  const { brand_id: _dropped, ...rest } = params;
  return own.brand ? { ...rest, brand_id: own.brand.id, product_ids: own.productIds } : { ...rest, product_ids: own.productIds };
}

const noLinks = { productIds: [] as string[], avatarIds: [] as string[] };

const typeOf = (operation: GenerationOperation, brandAndProductImages = 0): GenerationType => GENERATION_OPERATION_TABLE[operation].type(brandAndProductImages);

// Keyed by operation: an operation without a resolver does not compile.
const RESOLVERS: { [O in GenerationOperation]: Resolver } = {
  'talking-avatar': async (db, teamId, params) => {
    const links = await requireAvatar(db, teamId, params.avatar_type, params.avatar_id);
    if (params.voiceover_id) {
      // The voiceover wins over script + voice_id: what it says (and who says it) is what is stored.
      const vo = await findTeamVoiceover(db, teamId, params.voiceover_id);
      if (!vo) throw new AppError('not_found', 'Voiceover not found');
      const { script: _s, voice_id: _v, ...rest } = params;
      const credits = vo.text !== null ? priceOf('talking-avatar', { scriptLength: scriptLength(vo.text) }) : talkingAvatarCreditsForAudio(vo.duration_seconds);
      return { type: typeOf('talking-avatar'), params: { ...rest, ...(vo.text !== null ? { script: vo.text } : {}), voice_id: vo.voice_id }, credits, ...links };
    }
    const voice = await requireVoice(db, params.voice_id);
    return {
      type: typeOf('talking-avatar'),
      params: { ...params, voice_id: voice.id },
      credits: priceOf('talking-avatar', { scriptLength: scriptLength(params.script) }),
      ...links,
    };
  },
  'ai-video': async (db, teamId, params) => {
    const own = await ownBrandAndProducts(db, teamId, params.brand_id, params.product_ids);
    const kept = withOwnReferences(params, own);
    const attachedImages = Number(!!params.reference_image_url) + params.reference_image_urls.length + (own.brand?.referenceImages ?? 0) + own.productIds.length;
    return { type: typeOf('ai-video'), params: kept, credits: priceOf('ai-video', kept), productIds: own.productIds, avatarIds: [], attachedImages };
  },
  'swap-avatar': async (db, teamId, params) => {
    const links = params.avatar_id ? await requireAvatar(db, teamId, params.avatar_type, params.avatar_id) : noLinks;
    return { type: typeOf('swap-avatar'), params, credits: priceOf('swap-avatar', params), ...links };
  },
  localize: async (_db, _teamId, params) => {
    return { type: typeOf('localize'), params, credits: priceOf('localize', params), ...noLinks };
  },
  'video-edit': async (db, teamId, params) => {
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
    return { type: typeOf('video-edit'), params, credits: priceOf('video-edit', {}), ...noLinks, ...(sourceGenerationId ? { sourceGenerationId } : {}) };
  },
  'text-to-image': async (db, teamId, params) => {
    const own = await ownBrandAndProducts(db, teamId, params.brand_id, params.product_ids);
    const kept = withOwnReferences(params, own);
    // The table's type rule: the brand's and products' reference images may make it an image edit.
    const type = typeOf('text-to-image', (own.brand?.referenceImages ?? 0) + own.productIds.length);
    return { type, params: kept, credits: priceOf('text-to-image', kept), productIds: own.productIds, avatarIds: [] };
  },
  'product-shots': async (db, teamId, params) => {
    const product = await findProduct(db, teamId, params.product_id);
    if (!product) throw new AppError('not_found', 'Product not found');
    const style = await findStyleTemplate(db, params.style_id);
    if (!style) throw new AppError('not_found', 'Style not found');
    return { type: typeOf('product-shots'), params, credits: priceOf('product-shots', params), productIds: [product.id], avatarIds: [] };
  },
  'image-edit': async (db, teamId, params) => {
    const own = await ownBrandAndProducts(db, teamId, params.brand_id, params.product_ids);
    checkReferenceImageTotal({
      urls: params.reference_image_urls.length,
      brand: own.brand?.referenceImages ?? 0,
      products: own.productIds.length,
    });
    const kept = withOwnReferences(params, own);
    return { type: typeOf('image-edit'), params: kept, credits: priceOf('image-edit', kept), productIds: own.productIds, avatarIds: [] };
  },
};

/** The domain table's entry of each operation with its resolver. */
export const OPERATIONS = Object.fromEntries(
  GENERATION_OPERATIONS.map((operation) => [operation, { ...GENERATION_OPERATION_TABLE[operation], operation, resolve: RESOLVERS[operation] }]),
) as { readonly [O in GenerationOperation]: OperationSpec };
