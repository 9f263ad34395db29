import { isImageOperation } from '../../domain/generation-types.ts';
import type { GenerationRow } from '../../db/types.ts';
import { weaveImagePrompt, type PromptBrand } from '../../domain/reference-prompt.ts';
import { UpstreamError, type UpstreamFile, type UpstreamInputs } from '../../adapters/engines/engine-contract.ts';
import { download, openDownload } from '../../adapters/net/download.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import { findBrand } from '../../repositories/brands.ts';
import { findProductsByIds } from '../../repositories/products.ts';
import { findCaptionTemplate, findStyleTemplate } from '../../repositories/templates.ts';
import { findVoice } from '../../repositories/voices.ts';
import type { Deps } from '../deps.ts';
import { MAX_IMAGE_BYTES } from '../remote-images.ts';
import { uploadIdOf } from '../../domain/uploads.ts';
import { uploadKeyOf } from '../uploads.ts';
import { avatarImageKey, sourceGenerationKey, speechCopyKey, voiceoverAudioKey } from './input-keys.ts';
import type { ScriptSpeech } from './script-speech.ts';

// A provider's queue may hold a job for hours before it reads its inputs; a day covers that.
const INPUT_LINK_TTL_SECONDS = 24 * 3600;
// Every redirect and byte of one input, read whole (an image) or streamed (a video on its way to a provider).
const INPUT_DOWNLOAD_TIMEOUT_MS = 120_000;

/**
 * The one input resolver: what every engine, local or upstream, reads besides the stored request.
 * Every file (image, audio, video) is a link a provider can fetch (the user's URL, or a signed link
 * to our stored copy) and a read of its bytes on demand; the prompt is the one the spec implies
 * (brand identity and product details woven in for images only). An engine that speaks a script
 * itself (`speaksScript`: the local renderer) gets the catalogue voice instead of our speech copy.
 */
export function createInputResolver(deps: Pick<Deps, 'db' | 'config'> & { storage: Storage; script: Pick<ScriptSpeech, 'stored' | 'speak'> }) {
  const { db, storage, config, script } = deps;

  const notFetched = (e: unknown) => new UpstreamError('refused', `an input file could not be fetched: ${(e as Error).message}`, { cause: e });
  const mimeOf = (contentType: string | null) => contentType?.split(';')[0]?.trim() || 'application/octet-stream';

  const fromUrl = (url: string, maxBytes = MAX_IMAGE_BYTES): UpstreamFile => ({
    url,
    async read() {
      try {
        const r = await download(url, { maxBytes, allowPrivate: config.allowPrivateNetworkUrls, timeoutMs: INPUT_DOWNLOAD_TIMEOUT_MS });
        return { bytes: r.bytes, mime: mimeOf(r.contentType) };
      } catch (e) {
        throw notFetched(e);
      }
    },
    async open() {
      try {
        const r = await openDownload(url, { maxBytes, allowPrivate: config.allowPrivateNetworkUrls, timeoutMs: INPUT_DOWNLOAD_TIMEOUT_MS });
        return { stream: r.body, mime: mimeOf(r.contentType), ...(r.declaredSize !== undefined ? { size: r.declaredSize } : {}) };
      } catch (e) {
        throw notFetched(e);
      }
    },
  });

  const fromStorage = async (key: string): Promise<UpstreamFile> => ({
    url: await storage.signedUrl(key, INPUT_LINK_TTL_SECONDS),
    async read() {
      const o = await storage.get(key);
      if (!o) throw new UpstreamError('refused', 'a stored input file is missing');
      return { bytes: o.bytes, mime: o.contentType };
    },
    async open() {
      const o = await storage.openStream(key);
      if (!o) throw new UpstreamError('refused', 'a stored input file is missing');
      return { stream: o.stream, mime: o.contentType, size: o.size };
    },
  });

  /** A request's URL as the engine gets it: an upload of the team as a signed link to our stored copy, a URL as it is. */
  const input = async (teamId: string, url: string, maxBytes = MAX_IMAGE_BYTES): Promise<UpstreamFile> => {
    if (!uploadIdOf(url)) return fromUrl(url, maxBytes);
    const key = await uploadKeyOf(db, teamId, url);
    if (!key) throw new UpstreamError('refused', 'an uploaded input file is no longer stored');
    return fromStorage(key);
  };

  const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' && v ? [v] : []);

  return async function inputsOf(g: GenerationRow, o: { speaksScript?: boolean } = {}): Promise<UpstreamInputs> {
    const p = g.params as Record<string, unknown>;
    const productIds = g.operation === 'product-shots' ? list(p.product_id) : list(p.product_ids);
    const rows = await findProductsByIds(db, g.team_id, productIds);
    // The request's order, which the woven prompt follows.
    const products = productIds.map((id) => rows.find((r) => r.id === id)).filter((r) => r !== undefined);
    const brandRow = typeof p.brand_id === 'string' ? await findBrand(db, g.team_id, p.brand_id) : undefined;

    // The brand's logo, then its reference image, whichever it has.
    const logo = brandRow?.logo_url ? await input(g.team_id, brandRow.logo_url) : undefined;
    const reference = brandRow?.reference_image_url ? await input(g.team_id, brandRow.reference_image_url) : undefined;
    const brandImages = [logo, reference].filter((f) => f !== undefined);
    const brand: PromptBrand | undefined = brandRow && {
      name: brandRow.name,
      description: brandRow.description,
      colorPrimary: brandRow.brand_color_primary,
      colorAccent: brandRow.brand_color_accent,
      images: [...(logo ? (['logo'] as const) : []), ...(reference ? (['reference'] as const) : [])],
    };
    const references = await Promise.all([...list(p.reference_image_url), ...list(p.reference_image_urls)].map((u) => input(g.team_id, u)));

    let prompt = String(p.prompt ?? p.script ?? '');
    let template: Record<string, unknown> | undefined;
    if (g.operation === 'product-shots') {
      template = typeof p.style_id === 'string' ? await findStyleTemplate(db, p.style_id) : undefined;
      prompt = [template?.prompt, p.additional_prompt].filter((s) => typeof s === 'string' && s.trim()).join('. ');
    }
    if (g.operation === 'video-edit' && typeof p.template_id === 'string') template = await findCaptionTemplate(db, p.template_id);
    if (isImageOperation(g.operation)) {
      prompt = weaveImagePrompt(prompt, brand, products.map((r) => ({ name: r.name, description: r.description, category: r.category })), references.length);
    }

    const inputs: UpstreamInputs = {
      prompt,
      ...(typeof p.first_frame_image_url === 'string' ? { firstFrame: await input(g.team_id, p.first_frame_image_url) } : {}),
      ...(typeof p.last_frame_image_url === 'string' ? { lastFrame: await input(g.team_id, p.last_frame_image_url) } : {}),
      references,
      brandImages,
      productImages: await Promise.all(products.map((r) => fromStorage(r.image_key))),
      ...(brandRow ? { brand: { name: brandRow.name, colorPrimary: brandRow.brand_color_primary, colorAccent: brandRow.brand_color_accent, ...(logo ? { logo } : {}), ...(reference ? { reference } : {}) } } : {}),
      ...(template ? { template } : {}),
    };
    if (g.operation === 'talking-avatar' || g.operation === 'swap-avatar') {
      inputs.face = typeof p.image_url === 'string' ? await input(g.team_id, p.image_url) : await avatarFace(g.team_id, String(p.avatar_type), String(p.avatar_id));
    }
    if (g.operation === 'talking-avatar') {
      if (o.speaksScript && typeof p.voiceover_id !== 'string') {
        const v = typeof p.voice_id === 'string' ? await findVoice(db, p.voice_id) : undefined;
        if (v) inputs.voice = v.engine_voice as UpstreamInputs['voice'] & object;
      } else {
        inputs.speech = await speechOf(g);
      }
    }
    if (g.operation === 'swap-avatar' || g.operation === 'localize' || g.operation === 'video-edit') inputs.video = await sourceVideo(g.team_id, p);
    return inputs;
  };

  async function avatarFace(teamId: string, type: string, id: string): Promise<UpstreamFile> {
    const key = await avatarImageKey(db, teamId, type, id);
    if (!key) throw new UpstreamError('refused', 'the avatar no longer exists');
    return fromStorage(key);
  }

  /**
   * The voice is always ours, whichever provider animates it: the team's voiceover as stored, or
   * the script spoken once by our speech engine and kept with the generation (a retry reuses it).
   */
  async function speechOf(g: GenerationRow): Promise<UpstreamFile> {
    const p = g.params as Record<string, unknown>;
    if (typeof p.voiceover_id === 'string') {
      const key = await voiceoverAudioKey(db, g.team_id, p.voiceover_id);
      if (!key) throw new UpstreamError('refused', 'the voiceover no longer exists');
      return fromStorage(key);
    }
    if (!(await script.stored(g.id))) await script.speak(g);
    return fromStorage(speechCopyKey(g.id));
  }

  async function sourceVideo(teamId: string, p: Record<string, unknown>): Promise<UpstreamFile> {
    if (typeof p.generation_id === 'string') {
      const key = await sourceGenerationKey(db, p.generation_id);
      if (!key) throw new UpstreamError('refused', 'the source generation has no result');
      return fromStorage(key);
    }
    return input(teamId, String(p.video_url), config.maxInputVideoBytes);
  }
}
