import { describe, expect, it } from 'vitest';
import { createFalEngine } from '../../src/adapters/engines/fal/fal-engine.ts';
import { falInput } from '../../src/adapters/engines/fal/fal-models.ts';
import { createLocalEngine } from '../../src/adapters/engines/local/local-engine.ts';
import { createEngineRegistry } from '../../src/adapters/engines/registry.ts';
import { loadConfig } from '../../src/config.ts';

const local = createLocalEngine();
const fal = createFalEngine({ queueUrl: 'https://queue.example', apiKey: 'k', allowPrivate: false });

describe('engine routes', () => {
  it('a route to fal without FAL_KEY stops the start, naming the variable', () => {
    expect(() => createEngineRegistry([local], 'veo-3.1=fal,*=local')).toThrow('ENGINE_ROUTES entry "veo-3.1=fal" routes to fal, which needs FAL_KEY');
    expect(() => createEngineRegistry([local], 'veo-3.1=nobody')).toThrow('names no known engine (local)');
  });

  it('a model key wins over an operation key, and * catches the rest', () => {
    const r = createEngineRegistry([local, fal], 'veo-3.1=fal,ai-video=local,*=local');
    expect(r.engineFor({ model: 'veo-3.1', operation: 'ai-video' }).name).toBe('fal');
    expect(r.engineFor({ model: 'sora-2', operation: 'ai-video' }).name).toBe('local');
    expect(r.engineFor({ operation: 'localize' }).name).toBe('local');
    expect(createEngineRegistry([local, fal], 'ai-video=fal').engineFor({ model: 'veo-3.1-fast', operation: 'ai-video' }).name).toBe('fal');
  });

  it('refuses at create only what the routed provider cannot make', () => {
    const r = createEngineRegistry([local, fal], 'veo-3.1=fal,kling-2.6=fal,*=local');
    expect(r.refusal('ai-video', { model: 'veo-3.1', aspect_ratio: '16:9' })).toBeUndefined();
    expect(r.refusal('ai-video', { model: 'veo-3.1', aspect_ratio: '4:3' })).toBe('aspect_ratio: veo-3.1 on fal makes 16:9 or 9:16 videos, not 4:3');
    expect(r.refusal('ai-video', { model: 'veo-3.1', aspect_ratio: '9:16', reference_image_url: 'https://x/y.png' })).toMatch(/^reference_image_url: /);
    expect(r.refusal('ai-video', { model: 'kling-o3', aspect_ratio: '16:9' })).toBeUndefined();
    expect(createEngineRegistry([local, fal], 'kling-o3=fal').refusal('ai-video', { model: 'kling-o3', aspect_ratio: '16:9' })).toBeUndefined();
    expect(createEngineRegistry([local, fal], 'localize=fal').refusal('localize', { mode: 'speed' })).toMatch(/^localize is not served by the fal engine/);
    const seedance = createEngineRegistry([local, fal], 'ai-video=fal');
    expect(seedance.refusal('ai-video', { model: 'seedance-2.0', aspect_ratio: 'auto' }, 9)).toBeUndefined();
    expect(seedance.refusal('ai-video', { model: 'seedance-2.0', aspect_ratio: 'auto' }, 10)).toMatch(/at most 9 images in all; this request attaches 10/);
    expect(seedance.refusal('ai-video', { model: 'seedance-2.0-frames-fast', aspect_ratio: 'auto' }, 1)).toMatch(/^reference_image_urls: seedance-2.0-frames-fast on fal animates the first and last frames only/);
    expect(r.refusal('ai-video', { model: 'sora-2', aspect_ratio: '1:1' })).toBeUndefined();
  });

  it('a route lists providers in order; local only last; a provider named twice is an error', () => {
    const r = createEngineRegistry([local, fal], 'veo-3.1=fal|local,*=local');
    expect(r.chainFor({ model: 'veo-3.1', operation: 'ai-video' }).map((e) => e.name)).toEqual(['fal', 'local']);
    expect(r.routes()).toEqual([{ key: 'veo-3.1', engines: ['fal', 'local'] }, { key: '*', engines: ['local'] }]);
    expect(() => createEngineRegistry([local, fal], 'veo-3.1=local|fal')).toThrow('local can only be the last resort of a route');
    expect(() => createEngineRegistry([local, fal], 'veo-3.1=fal|fal')).toThrow('names fal twice');
    expect(() => createEngineRegistry([local], 'veo-3.1=local|fal')).toThrow('routes to fal, which needs FAL_KEY');
    // A route is refused only when none of its engines can make the request.
    expect(r.refusal('ai-video', { model: 'veo-3.1', aspect_ratio: '4:3' })).toBeUndefined();
    expect(createEngineRegistry([local, fal], 'veo-3.1=fal').refusal('ai-video', { model: 'veo-3.1', aspect_ratio: '4:3' })).toMatch(/^aspect_ratio: /);
    // A talking avatar routes by its lipsync_model.
    expect(createEngineRegistry([local, fal], 'heygen-avatar4=fal,*=local').engineFor({ model: 'heygen-avatar4', operation: 'talking-avatar' }).name).toBe('fal');
  });

  it('FAL_MODEL_ENDPOINTS overrides the default endpoint per model and input kind', () => {
    const config = loadConfig({ DATA_DIR: '/tmp/x', FAL_KEY: 'k', FAL_MODEL_ENDPOINTS: 'veo-3.1=acme/veo/text, veo-3.1:frames=acme/veo/flf' });
    const endpoints = config.upstream.fal!.endpoints;
    expect(falInput({ model: 'veo-3.1', duration: 4 }, endpoints).endpoint).toBe('acme/veo/text');
    expect(falInput({ model: 'veo-3.1', duration: 4, first_frame_image_url: 'a', last_frame_image_url: 'b' }, endpoints).endpoint).toBe('acme/veo/flf');
    expect(falInput({ model: 'veo-3.1', duration: 4, first_frame_image_url: 'a' }, endpoints).endpoint).toBe('fal-ai/veo3.1/image-to-video');
    expect(() => loadConfig({ DATA_DIR: '/tmp/x', FAL_MODEL_ENDPOINTS: 'veo-3.1' })).toThrow(/"veo-3.1" is not name=value/);
    // Kling O3's keys carry its tier (its quality); the reference endpoint is chosen by attached images.
    const o3 = loadConfig({ DATA_DIR: '/tmp/x', FAL_KEY: 'k', FAL_MODEL_ENDPOINTS: 'kling-o3-4k:reference=acme/o3/ref4k' }).upstream.fal!.endpoints;
    expect(falInput({ model: 'kling-o3', quality: '4k', duration: 5 }, o3, ['https://x/r.png']).endpoint).toBe('acme/o3/ref4k');
    expect(falInput({ model: 'kling-o3', quality: '4k', duration: 5 }, o3).endpoint).toBe('fal-ai/kling-video/o3/4k/text-to-video');
    expect(falInput({ model: 'seedance-2.0', duration: 5 }, {}, ['https://x/r.png']).endpoint).toBe('bytedance/seedance-2.0/reference-to-video');
  });
});

describe('retired provider models', () => {
  // A stand-in provider whose published API retired one of our models (as OpenAI did Sora's).
  const retiring = { ...createFalEngine({ queueUrl: 'https://queue.example', apiKey: 'k', allowPrivate: false }), name: 'acme', retired: { 'sora-2': { operation: 'ai-video' as const, since: '2026-09-24', instead: 'fal' } } };

  it('a route that sends a retired model to its provider stops the start with the date and the alternative', () => {
    expect(() => createEngineRegistry([local, fal, retiring], 'sora-2=acme|fal,*=local')).toThrow(
      'invalid configuration: ENGINE_ROUTES sends sora-2 to acme, which retired it on 2026-09-24; route it to fal instead (sora-2=fal)',
    );
    // Through an operation key or the catch-all too.
    expect(() => createEngineRegistry([local, fal, retiring], 'ai-video=acme,*=local')).toThrow(/sends sora-2 to acme, which retired it on 2026-09-24/);
    expect(() => createEngineRegistry([local, fal, retiring], '*=acme')).toThrow(/sends sora-2 to acme/);
  });

  it('a route that sends the retired model elsewhere is fine, whatever else the provider serves', () => {
    const r = createEngineRegistry([local, fal, retiring], 'ai-video=acme,sora-2=fal,*=local');
    expect(r.engineFor({ model: 'sora-2', operation: 'ai-video' }).name).toBe('fal');
    expect(r.retirements()).toEqual([{ provider: 'acme', model: 'sora-2', since: '2026-09-24', instead: 'fal' }]);
  });
});
