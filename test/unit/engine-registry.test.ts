import { describe, expect, it } from 'vitest';
import { createFalEngine } from '../../src/adapters/engines/fal/fal-engine.ts';
import { falInput } from '../../src/adapters/engines/fal/fal-models.ts';
import { createLocalEngine } from '../../src/adapters/engines/local/local-engine.ts';
import { createEngineRegistry } from '../../src/adapters/engines/registry.ts';
import type { LifecycleEntry, LifecycleStatus } from '../../src/adapters/engines/lifecycle.ts';
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

describe('model lifecycle in the routes', () => {
  // A stand-in provider (fal's adapter under another name) whose table has retired Veo 3.1 and still serves Kling 2.6.
  const veoIds = ['fal-ai/veo3.1', 'fal-ai/veo3.1/image-to-video', 'fal-ai/veo3.1/first-last-frame-to-video'];
  const entries = (status: LifecycleStatus, serves: string, ids: string[], extra: Partial<LifecycleEntry> = {}): LifecycleEntry[] =>
    ids.map((id) => ({ id, serves: [serves], status, date: '2026-10-22', source: 'a stand-in deprecations page', ...extra }));
  const standIn = (name: string, table: LifecycleEntry[]) => ({ ...createFalEngine({ queueUrl: 'https://queue.example', apiKey: 'k', allowPrivate: false }), name, lifecycle: { provider: name, read: '2026-12-07', entries: table } });
  const acme = standIn('acme', [...entries('retired', 'veo-3.1', veoIds), ...entries('live', 'kling-2.6', ['fal-ai/kling-video/v2.6/pro/text-to-video', 'fal-ai/kling-video/v2.6/pro/image-to-video'])]);
  const today = '2026-12-07';

  it('a route that names a model its provider retired stops the start with the date and a live route instead', () => {
    expect(() => createEngineRegistry([local, fal, acme], 'veo-3.1=acme|fal,*=local', { today })).toThrow(
      'invalid configuration: ENGINE_ROUTES sends veo-3.1 to acme, which retired fal-ai/veo3.1 on 2026-10-22 (a stand-in deprecations page); route it to fal instead (veo-3.1=fal)',
    );
  });

  it('a route whose every model at that provider is retired stops the start too, naming the route', () => {
    const veoOnly = standIn('veo-only', entries('retired', 'veo-3.1', veoIds));
    expect(() => createEngineRegistry([local, fal, veoOnly], 'ai-video=veo-only,*=local', { today })).toThrow(/sends veo-3\.1 to veo-only \(its route ai-video\), which retired fal-ai\/veo3\.1 on 2026-10-22/);
    expect(() => createEngineRegistry([local, fal, veoOnly], '*=veo-only', { today })).toThrow(/sends veo-3\.1 to veo-only \(its route \*\)/);
  });

  it('a retired model an operation route covers among live ones is left out of it: refused at create, the rest served', () => {
    const r = createEngineRegistry([local, fal, acme], 'ai-video=acme,*=local', { today });
    expect(r.chainFor({ model: 'veo-3.1', operation: 'ai-video' })).toEqual([]);
    expect(r.refusal('ai-video', { model: 'veo-3.1', aspect_ratio: '16:9' })).toBe('model: veo-3.1 is no longer made by acme, which retired it on 2026-10-22');
    expect(r.chainFor({ model: 'kling-2.6', operation: 'ai-video' }).map((e) => e.name)).toEqual(['acme']);
    expect(r.refusal('ai-video', { model: 'kling-2.6', aspect_ratio: '16:9' })).toBeUndefined();
    // Another provider of the route still makes it: that one is used.
    expect(createEngineRegistry([local, fal, acme], 'ai-video=acme|fal', { today }).chainFor({ model: 'veo-3.1', operation: 'ai-video' }).map((e) => e.name)).toEqual(['fal']);
    expect(r.lifecycle().filter((f) => f.status === 'retired').map((f) => [f.route, f.name, f.stops, f.instead])).toEqual([['ai-video', 'veo-3.1', false, 'route it to fal instead (veo-3.1=fal)']]);
  });

  it('a deprecated model starts, reported with its dates; past its announced shutdown it is retired', () => {
    const fading = standIn('fading', entries('deprecated', 'veo-3.1', veoIds, { date: '2026-11-01', shutdown: '2027-01-15', successor: 'veo-4' }));
    const before = createEngineRegistry([local, fal, fading], 'veo-3.1=fading', { today });
    expect(before.lifecycle()).toEqual([expect.objectContaining({ route: 'veo-3.1', provider: 'fading', name: 'veo-3.1', status: 'deprecated', date: '2026-11-01', stops: false })]);
    expect(() => createEngineRegistry([local, fal, fading], 'veo-3.1=fading', { today: '2027-01-15' })).toThrow(/which retired fal-ai\/veo3\.1 on 2027-01-15 .*\(veo-3\.1=fal\)/);
  });

  it('allowRetired builds the routes as configured and reports what would stop the start (adforge providers check)', () => {
    const r = createEngineRegistry([local, fal, acme], 'veo-3.1=acme,*=local', { today, allowRetired: true });
    expect(r.chainFor({ model: 'veo-3.1', operation: 'ai-video' }).map((e) => e.name)).toEqual(['acme']);
    expect(r.lifecycle()).toEqual([expect.objectContaining({ route: 'veo-3.1', provider: 'acme', status: 'retired', stops: true, instead: 'route it to fal instead (veo-3.1=fal)' })]);
  });

  it("fal's Sora endpoints are retired: an operation route to fal refuses sora-2 at create, naming the date", () => {
    const r = createEngineRegistry([local, fal], 'ai-video=fal', { today });
    expect(r.refusal('ai-video', { model: 'sora-2', aspect_ratio: '16:9' })).toBe('model: sora-2 is no longer made by fal, which retired it on 2026-08-02');
    expect(r.refusal('ai-video', { model: 'kling-2.6', aspect_ratio: '16:9' })).toBeUndefined();
  });
});
