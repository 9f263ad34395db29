import type { GenerationRow } from '../../db/types.ts';
import { weaveImagePrompt, type PromptBrand } from '../../domain/reference-prompt.ts';
import { UpstreamError, type UpstreamImage, type UpstreamInputs } from '../../adapters/engines/upstream.ts';
import { download } from '../../adapters/net/download.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import { findBrand } from '../../repositories/brands.ts';
import { findProductsByIds } from '../../repositories/products.ts';
import { findStyleTemplate } from '../../repositories/templates.ts';
import type { Deps } from '../context.ts';
import { MAX_IMAGE_BYTES } from '../remote-images.ts';

// A provider's queue may hold a job for hours before it reads its inputs; a day covers that.
const INPUT_LINK_TTL_SECONDS = 24 * 3600;

const IMAGE_OPERATIONS = new Set(['text-to-image', 'image-edit', 'product-shots']);

/**
 * What an upstream adapter reads besides the stored request: every image as a link the provider
 * can fetch (the user's URL, or a signed link to our stored copy) and as bytes on demand, and the
 * prompt the spec implies (brand identity and product details woven in for images only).
 */
export function createUpstreamInputs(deps: Pick<Deps, 'db' | 'config'> & { storage: Storage }) {
  const { db, storage, config } = deps;

  const fromUrl = (url: string): UpstreamImage => ({
    url,
    async read() {
      try {
        const r = await download(url, { maxBytes: MAX_IMAGE_BYTES, allowPrivate: config.allowPrivateNetworkUrls, timeoutMs: 60_000 });
        return { bytes: r.bytes, mime: r.contentType?.split(';')[0]?.trim() || 'application/octet-stream' };
      } catch (e) {
        throw new UpstreamError('refused', `an input image could not be fetched: ${(e as Error).message}`, { cause: e });
      }
    },
  });

  const fromStorage = async (key: string): Promise<UpstreamImage> => ({
    url: await storage.signedUrl(key, INPUT_LINK_TTL_SECONDS),
    async read() {
      const o = await storage.get(key);
      if (!o) throw new UpstreamError('refused', 'a stored input image is missing');
      return { bytes: o.bytes, mime: o.contentType };
    },
  });

  const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' && v ? [v] : []);

  return async function inputsOf(g: GenerationRow): Promise<UpstreamInputs> {
    const p = g.params as Record<string, unknown>;
    const productIds = g.operation === 'product-shots' ? list(p.product_id) : list(p.product_ids);
    const rows = await findProductsByIds(db, g.team_id, productIds);
    // The request's order, which the woven prompt follows.
    const products = productIds.map((id) => rows.find((r) => r.id === id)).filter((r) => r !== undefined);
    const brandRow = typeof p.brand_id === 'string' ? await findBrand(db, g.team_id, p.brand_id) : undefined;

    const brandImages: UpstreamImage[] = [];
    let brand: PromptBrand | undefined;
    if (brandRow) {
      brand = { name: brandRow.name, description: brandRow.description, colorPrimary: brandRow.brand_color_primary, colorAccent: brandRow.brand_color_accent, images: [] };
      if (brandRow.logo_url) (brandImages.push(fromUrl(brandRow.logo_url)), brand.images.push('logo'));
      if (brandRow.reference_image_url) (brandImages.push(fromUrl(brandRow.reference_image_url)), brand.images.push('reference'));
    }
    const references = [...list(p.reference_image_url), ...list(p.reference_image_urls)].map(fromUrl);

    let prompt = String(p.prompt ?? p.script ?? '');
    if (g.operation === 'product-shots') {
      const style = typeof p.style_id === 'string' ? await findStyleTemplate(db, p.style_id) : undefined;
      prompt = [style?.prompt, p.additional_prompt].filter((s) => typeof s === 'string' && s.trim()).join('. ');
    }
    if (IMAGE_OPERATIONS.has(g.operation)) {
      prompt = weaveImagePrompt(prompt, brand, products.map((r) => ({ name: r.name, description: r.description, category: r.category })), references.length);
    }

    return {
      prompt,
      ...(typeof p.first_frame_image_url === 'string' ? { firstFrame: fromUrl(p.first_frame_image_url) } : {}),
      ...(typeof p.last_frame_image_url === 'string' ? { lastFrame: fromUrl(p.last_frame_image_url) } : {}),
      references,
      brandImages,
      productImages: await Promise.all(products.map((r) => fromStorage(r.image_key))),
    };
  };
}
export type UpstreamInputsOf = ReturnType<typeof createUpstreamInputs>;
