import { describe, expect, it } from 'vitest';
import { buildEngines } from '../../src/adapters/engines/from-config.ts';
import { PROVIDER_MODULES } from '../../src/adapters/engines/providers.ts';
import { loadConfig } from '../../src/config.ts';

// The start, up to the engines (what buildApp does first): every provider's key set, routes as given.
const KEYS = Object.fromEntries(PROVIDER_MODULES.filter((p) => p.name !== 'comfyui').map((p) => [p.keyVariable, 'k']));
const start = (routes: string, extra: Record<string, string> = {}) => buildEngines(loadConfig({ DATA_DIR: '/tmp/adforge-lifecycle-start', ENGINE_ROUTES: routes, ...KEYS, ...extra }));

describe('a route to a model its provider retired stops the start', () => {
  it('veo-3.1 on Gemini: Google shut the Veo 3.1 preview ids down on 2026-10-22; the live route named is fal', async () => {
    await expect(start('veo-3.1=gemini,*=local')).rejects.toThrow(
      /ENGINE_ROUTES sends veo-3\.1 to gemini, which retired veo-3\.1-generate-preview on 2026-10-22 .*; route it to fal instead \(veo-3\.1=fal\)/,
    );
    // A route whose first provider retired it stops too, even when a later one still makes it.
    await expect(start('veo-3.1-fast=gemini|fal,*=local')).rejects.toThrow(/sends veo-3\.1-fast to gemini, which retired veo-3\.1-fast-generate-preview on 2026-10-22/);
  });

  it('sora-2 on OpenAI: the date, and no suggestion of fal, which retired Sora too', async () => {
    const refused = await start('sora-2=openai,*=local').catch((e: unknown) => (e as Error).message);
    expect(refused).toMatch(/ENGINE_ROUTES sends sora-2 to openai, which retired sora-2 on 2026-09-24 /);
    expect(refused).toMatch(/no provider adforge knows still makes sora-2/);
    expect(refused).not.toMatch(/sora-2=fal/);
  });

  it('sora-2 on fal: its client dropped every Sora endpoint on 2026-08-02', async () => {
    await expect(start('sora-2-pro=fal,*=local')).rejects.toThrow(/ENGINE_ROUTES sends sora-2-pro to fal, which retired fal-ai\/sora-2\/text-to-video\/pro on 2026-08-02 /);
  });

  it('an image model mapped to a retired OpenAI model: the live model of the same provider is named', async () => {
    await expect(start('gpt-2=openai,*=local', { OPENAI_IMAGE_MODELS: 'gpt-2=gpt-image-1.5' })).rejects.toThrow(
      /sends gpt-2 to openai, which retired gpt-image-1\.5 on 2026-12-01 .*\(OPENAI_IMAGE_MODELS=gpt-2=gpt-image-2\)/,
    );
  });

  it('the defaults start: every default model is live or only deprecated', async () => {
    const engines = await start('gpt-2=openai,gpt-2.5=openai,fast=gemini,pro=gemini,ai-video=fal,talking-avatar=heygen,*=local');
    expect(engines.routes().length).toBe(7);
  });
});
