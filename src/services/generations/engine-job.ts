import type { Db } from '../../db/pool.ts';
import type { GenerationRow } from '../../db/types.ts';
import { imageSize } from '../../domain/image-inputs.ts';
import { frameSize, type VideoResolution } from '../../domain/video-models.ts';
import type { EngineAsset, EngineBrand, EngineJob } from '../../adapters/engines/engine.ts';
import { probeMedia } from '../../adapters/engines/ffmpeg.ts';
import { download } from '../../adapters/net/download.ts';
import { findBrand } from '../../repositories/brands.ts';
import { findProductsByIds } from '../../repositories/products.ts';
import { findCaptionTemplate, findStyleTemplate } from '../../repositories/templates.ts';
import { findVoice } from '../../repositories/voices.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import { MAX_IMAGE_BYTES } from '../remote-images.ts';
import { readUpload } from '../uploads.ts';
import { avatarImageKey, sourceGenerationKey, voiceoverAudioKey } from './input-keys.ts';

export interface AssetDeps {
  db: Db;
  storage: Storage;
  allowPrivate: boolean;
  maxVideoBytes: number;
}

// Talking avatars have no size in the request; portrait suits the ad placements they are made for.
const TALKING_AVATAR_FRAME = { width: 720, height: 1280 };

/** Turns a stored generation into the engine's input: ids resolved, URLs fetched, sizes computed. */
export async function buildEngineJob(deps: AssetDeps, g: GenerationRow): Promise<EngineJob> {
  const p = g.params as Record<string, any>;
  const fromUrl = async (url: string, maxBytes = MAX_IMAGE_BYTES): Promise<EngineAsset> => {
    const uploaded = await readUpload(deps, g.team_id, url);
    if (uploaded) return { bytes: uploaded.bytes, mime: uploaded.mime };
    const r = await download(url, { maxBytes, allowPrivate: deps.allowPrivate, timeoutMs: 60_000 });
    return { bytes: r.bytes, mime: r.contentType ?? 'application/octet-stream' };
  };
  const fromStorage = async (key: string): Promise<EngineAsset> => {
    const o = await deps.storage.get(key);
    if (!o) throw new Error(`stored file ${key} is missing`);
    return { bytes: o.bytes, mime: o.contentType };
  };
  const urls = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : typeof v === 'string' ? [v] : []);

  const job: EngineJob = {
    generationId: g.id,
    operation: g.operation,
    kind: g.kind,
    params: p,
    width: 0,
    height: 0,
    quantity: g.kind === 'image' ? Number(p.quantity ?? 1) : 1,
    prompt: String(p.prompt ?? p.additional_prompt ?? p.script ?? ''),
    referenceImages: [],
    productImages: [],
  };

  const productIds: string[] = Array.isArray(p.product_ids) ? p.product_ids : p.product_id ? [p.product_id] : [];
  if (productIds.length) {
    const rows = await findProductsByIds(deps.db, g.team_id, productIds);
    job.productImages = await Promise.all(rows.map((r) => fromStorage(r.image_key)));
  }
  if (p.brand_id) job.brand = await loadBrand(deps, g.team_id, p.brand_id, fromUrl);

  switch (g.operation) {
    case 'text-to-image':
    case 'image-edit':
    case 'product-shots': {
      Object.assign(job, imageSize(p.aspect_ratio, p.resolution));
      job.referenceImages = await Promise.all(urls(p.reference_image_urls).map((u) => fromUrl(u)));
      if (g.operation === 'product-shots') {
        job.template = await findStyleTemplate(deps.db, p.style_id);
        job.prompt = [job.template?.prompt, p.additional_prompt].filter(Boolean).join('. ');
      }
      break;
    }
    case 'ai-video': {
      Object.assign(job, frameSize(p.aspect_ratio, p.resolution as VideoResolution));
      job.durationSeconds = Number(p.duration);
      const refs = [p.first_frame_image_url, ...urls(p.reference_image_url), ...urls(p.reference_image_urls), p.last_frame_image_url].filter(Boolean);
      job.referenceImages = await Promise.all(refs.map((u: string) => fromUrl(u)));
      break;
    }
    case 'talking-avatar': {
      Object.assign(job, TALKING_AVATAR_FRAME);
      job.script = String(p.script ?? '');
      job.avatar = await avatarImage(deps, g.team_id, p.avatar_type, p.avatar_id, fromStorage);
      if (p.voiceover_id) {
        const key = await voiceoverAudioKey(deps.db, g.team_id, p.voiceover_id);
        if (!key) throw new Error('the voiceover no longer exists');
        job.voiceAudio = await fromStorage(key);
      } else if (p.voice_id) {
        const v = await findVoice(deps.db, String(p.voice_id));
        if (v) job.voice = v.engine_voice as EngineJob['voice'];
      }
      break;
    }
    case 'swap-avatar':
    case 'localize': {
      job.width = even(p.width);
      job.height = even(p.height);
      job.durationSeconds = Number(p.duration);
      job.inputVideo = await fromUrl(p.video_url, deps.maxVideoBytes);
      if (g.operation === 'swap-avatar') {
        job.avatar = p.image_url ? await fromUrl(p.image_url) : await avatarImage(deps, g.team_id, p.avatar_type, p.avatar_id, fromStorage);
      }
      break;
    }
    case 'video-edit': {
      if (p.generation_id) {
        const key = await sourceGenerationKey(deps.db, p.generation_id);
        if (!key) throw new Error('the source generation has no result');
        job.inputVideo = await fromStorage(key);
      } else {
        job.inputVideo = await fromUrl(p.video_url, deps.maxVideoBytes);
      }
      const info = await probeMedia(job.inputVideo.bytes, { kind: 'video' });
      job.width = even(info.width ?? 720);
      job.height = even(info.height ?? 1280);
      job.durationSeconds = Math.min(Math.max(info.durationSeconds ?? 1, 1), 120);
      job.template = await findCaptionTemplate(deps.db, p.template_id);
      break;
    }
  }
  return job;
}

function even(n: unknown): number {
  const v = Math.max(2, Math.round(Number(n)));
  return v % 2 === 0 ? v : v + 1;
}

async function avatarImage(
  deps: AssetDeps,
  teamId: string,
  type: string,
  id: string,
  fromStorage: (key: string) => Promise<EngineAsset>,
): Promise<EngineAsset> {
  const key = await avatarImageKey(deps.db, teamId, type, id);
  if (!key) throw new Error('the avatar no longer exists');
  return fromStorage(key);
}

async function loadBrand(
  deps: AssetDeps,
  teamId: string,
  brandId: string,
  fromUrl: (url: string) => Promise<EngineAsset>,
): Promise<EngineBrand | undefined> {
  const b = await findBrand(deps.db, teamId, brandId);
  if (!b) return undefined;
  return {
    name: b.name,
    colorPrimary: b.brand_color_primary,
    colorAccent: b.brand_color_accent,
    logo: b.logo_url ? await fromUrl(b.logo_url) : null,
    reference: b.reference_image_url ? await fromUrl(b.reference_image_url) : null,
  };
}
