import { describe, expect, it } from 'vitest';
import {
  ANY_IMAGE_MODEL,
  GEMINI_DEFAULT_IMAGE_MODELS,
  GEMINI_IMAGE_LIMITS,
  GEMINI_VIDEO_MODELS,
  VEO_DURATIONS,
  VEO_EIGHT_SECONDS_RESOLUTIONS,
  VEO_MAX_REFERENCES,
  VEO_RATIOS,
  VEO_REFERENCE_MODELS,
  VEO_RESOLUTIONS,
  geminiRefusal,
} from '../../src/adapters/engines/gemini/gemini-map.ts';
import { loadContract } from '../support/contract.ts';

/*
 * The Gemini route's refusal tables (the 400 at create) against the stored contracts: a limit of
 * ours that the contract does not state, or one it states that we miss, fails here.
 */
type Schema = Record<string, any>;
const veo = loadContract('gemini', 'predict-long-running').request.body as Schema;
const images = loadContract('gemini', 'generate-content').request.body as Schema;
const veoParams = veo.$defs.parameters.properties;
const veoModels: Record<string, Schema> = veo.$defs.models.$defs;
const imageModels: Record<string, Schema> = images.$defs.models.$defs;
const sorted = (xs: readonly unknown[]) => [...xs].map(String).sort();

describe('Veo on Gemini: the refusal tables are the contract', () => {
  it('aspect ratios and durations', () => {
    expect(sorted(VEO_RATIOS)).toEqual(sorted(veoParams.aspectRatio.enum));
    expect(sorted(VEO_DURATIONS)).toEqual(sorted(veoParams.durationSeconds.enum.filter((d: unknown) => typeof d === 'number')));
  });

  it('each model has a contract entry, and its resolutions are the contract\'s minus what the model\'s entry narrows', () => {
    for (const model of Object.values(GEMINI_VIDEO_MODELS)) expect(Object.keys(veoModels)).toContain(model);
    for (const [model, resolutions] of Object.entries(VEO_RESOLUTIONS)) {
      const narrowed = veoModels[model]?.properties?.parameters?.properties?.resolution?.enum ?? veoParams.resolution.enum;
      expect(sorted(resolutions), model).toEqual(sorted(narrowed));
    }
  });

  it('1080p and 4k are 8 seconds only, and so is a video with reference images', () => {
    const [byResolution, byReferences] = veo.allOf as Schema[];
    expect(sorted(VEO_EIGHT_SECONDS_RESOLUTIONS)).toEqual(sorted(byResolution!.if.properties.parameters.properties.resolution.enum));
    expect(byResolution!.then.properties.parameters.properties.durationSeconds.enum).toContain(8);
    expect(byReferences!.if.properties.instances.contains.required).toEqual(['referenceImages']);
    expect(byReferences!.then.properties.parameters.properties.durationSeconds.enum).toContain(8);
  });

  it('reference images: only the models whose entry allows them, at most the contract\'s count', () => {
    const allow = Object.entries(veoModels).filter(([, s]) => s.properties?.instances?.items?.properties?.referenceImages !== false).map(([m]) => m);
    expect(sorted(VEO_REFERENCE_MODELS)).toEqual(sorted(allow));
    expect(VEO_MAX_REFERENCES).toBe(veo.$defs.instance.properties.referenceImages.maxItems);
  });

  it('the refusals say so at create', () => {
    const base = { model: 'veo-3.1', prompt: 'x', aspect_ratio: '16:9', duration: 8, resolution: '1080p' };
    expect(geminiRefusal('ai-video', base)).toBeUndefined();
    expect(geminiRefusal('ai-video', { ...base, resolution: '4k' })).toBeUndefined();
    expect(geminiRefusal('ai-video', { ...base, aspect_ratio: '1:1' })).toBe('aspect_ratio: veo-3.1 on Gemini makes 16:9 or 9:16 videos, not 1:1');
    expect(geminiRefusal('ai-video', { ...base, duration: 6 })).toBe('duration: veo-3.1 on Gemini makes 1080p videos of 8 seconds only, not 6');
    expect(geminiRefusal('ai-video', { ...base, resolution: '720p', duration: 6 })).toBeUndefined();
    expect(geminiRefusal('ai-video', { ...base, resolution: '480p' })).toBe('resolution: veo-3.1 on Gemini makes 720p, 1080p or 4k videos, not 480p');
    const withReference = { ...base, resolution: '720p', reference_image_url: 'https://example.com/r.png' };
    expect(geminiRefusal('ai-video', withReference)).toBeUndefined();
    expect(geminiRefusal('ai-video', { ...withReference, duration: 4 })).toBe('duration: veo-3.1 on Gemini makes videos with a reference image of 8 seconds only, not 4');
    expect(geminiRefusal('ai-video', { ...withReference, first_frame_image_url: 'https://example.com/a.png' })).toBe('reference_image_url: veo-3.1 on Gemini takes a reference image or frame images, not both');
    expect(geminiRefusal('ai-video', { ...withReference, model: 'veo-3.1-fast' })).toBe('reference_image_url: veo-3.1-fast on Gemini takes no reference image');
  });
});

describe('Gemini images: the refusal tables are the contract', () => {
  it('every model the table knows has the contract\'s ratios and sizes', () => {
    expect(sorted(Object.keys(GEMINI_IMAGE_LIMITS))).toEqual(sorted(Object.keys(imageModels)));
    for (const [model, limits] of Object.entries(GEMINI_IMAGE_LIMITS)) {
      const schema = imageModels[model]!.properties;
      expect(sorted(limits.ratios), model).toEqual(sorted(schema.aspectRatio.enum));
      if (limits.sizes === null) expect(schema.imageSize, `${model} takes no imageSize`).toBeUndefined();
      else expect(sorted(limits.sizes), model).toEqual(sorted(schema.imageSize.enum));
    }
  });

  it('a model it does not know is held to the call\'s own enums; the defaults are models the contract knows', () => {
    const config = images.properties.generationConfig.properties.imageConfig.properties;
    expect(sorted(ANY_IMAGE_MODEL.ratios)).toEqual(sorted(config.aspectRatio.enum));
    expect(sorted(ANY_IMAGE_MODEL.sizes ?? [])).toEqual(sorted(config.imageSize.enum));
    for (const model of Object.values(GEMINI_DEFAULT_IMAGE_MODELS)) expect(Object.keys(imageModels)).toContain(model);
  });

  it('the refusals say so at create, by the Gemini model the route uses', () => {
    const p = { model: 'fast', prompt: 'x', aspect_ratio: '4:1', resolution: '4k' };
    expect(geminiRefusal('text-to-image', p)).toBeUndefined();
    expect(geminiRefusal('text-to-image', { ...p, model: 'pro' })).toMatch(/^aspect_ratio: pro on Gemini makes 1:1, .*21:9 images, not 4:1$/);
    const old = { fast: 'gemini-2.5-flash-image', pro: 'gemini-3-pro-image' };
    expect(geminiRefusal('text-to-image', { ...p, aspect_ratio: '1:1' }, old)).toBe('resolution: fast on Gemini makes 1k images only, not 4k');
    expect(geminiRefusal('image-edit', { ...p, aspect_ratio: '1:1', resolution: '1k' }, old)).toBeUndefined();
    expect(geminiRefusal('text-to-image', { ...p, model: 'gpt-2' })).toMatch(/is not served by the Gemini engine/);
  });
});
