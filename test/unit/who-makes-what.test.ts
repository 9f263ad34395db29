import { describe, expect, it } from 'vitest';
import { createFalEngine } from '../../src/adapters/engines/fal/fal-engine.ts';
import { createLocalEngine } from '../../src/adapters/engines/local/local-engine.ts';
import { createEngineRegistry } from '../../src/adapters/engines/registry.ts';
import { GENERATION_OPERATIONS } from '../../src/domain/generation-types.ts';
import { anyDemo, describePlan, whoMakesWhat } from '../../src/domain/who-makes-what.ts';

const local = createLocalEngine();
const fal = createFalEngine({ queueUrl: 'https://queue.example', apiKey: 'k', allowPrivate: false });
const plan = (routes: string | undefined) => whoMakesWhat(createEngineRegistry([local, fal], routes).routes());
const of = (p: ReturnType<typeof plan>, op: string) => p.find((o) => o.operation === op)!;

describe('who makes what', () => {
  it('the default set-up: every operation goes to the demo renderer', () => {
    const p = plan(undefined);
    expect(p.map((o) => o.operation)).toEqual(GENERATION_OPERATIONS);
    expect(p.every((o) => o.demo && !o.demo_fallback && o.engines.join() === 'local' && o.models.length === 0)).toBe(true);
    expect(anyDemo(p)).toBe(true);
    expect(describePlan(p)[0]).toMatch(/^talking-avatar\s+local \(demo, not AI\)$/);
  });

  it('routes without "*" leave the rest to the demo renderer, as the registry does', () => {
    const p = plan('ai-video=fal');
    expect(of(p, 'ai-video')).toMatchObject({ engines: ['fal'], demo: false, demo_fallback: false, models: [] });
    expect(of(p, 'text-to-image')).toMatchObject({ engines: ['local'], demo: true });
  });

  it('a model route counts for the operations whose requests name that model', () => {
    const p = plan('veo-3.1=local,*=fal');
    expect(of(p, 'ai-video')).toMatchObject({ engines: ['fal'], demo: true, models: [{ model: 'veo-3.1', engines: ['local'], demo: true }] });
    expect(of(p, 'text-to-image')).toMatchObject({ engines: ['fal'], demo: false, models: [] });
    expect(anyDemo(p)).toBe(true);
    expect(describePlan(p).find((l) => l.startsWith('ai-video'))).toMatch(/fal {2}\(veo-3.1: local \(demo\)\)$/);
  });

  it('an operation whose every model has a provider route makes no demo, whatever its own route says', () => {
    const p = plan('fast=fal,pro=fal,gpt-2=fal,gpt-2.5=fal');
    expect(of(p, 'text-to-image')).toMatchObject({ engines: ['local'], demo: false });
    expect(of(p, 'image-edit').demo).toBe(false);
    // product shots name no model: the fallback (local) makes them.
    expect(of(p, 'product-shots').demo).toBe(true);
  });

  it('the demo renderer as a last resort is a fallback, not the maker', () => {
    const p = plan('*=fal|local');
    expect(p.every((o) => !o.demo && o.demo_fallback)).toBe(true);
    expect(anyDemo(p)).toBe(false);
    expect(describePlan(p)[0]).toMatch(/fal → local \(demo, not AI\)$/);
  });
});
