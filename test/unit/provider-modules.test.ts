import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GENERATION_OPERATIONS } from '../../src/domain/generation-types.ts';
import { PROVIDER_MODULES } from '../../src/adapters/engines/providers.ts';
import type { ProviderModule } from '../../src/adapters/engines/provider.ts';
import { buildEngines } from '../../src/adapters/engines/from-config.ts';
import { loadConfig } from '../../src/config.ts';

// Each provider module says what its engine can make; these hold that to the adapter's own refusals.
const modules = PROVIDER_MODULES;
const engineOf = (p: ProviderModule) => p.create(p.settings(z.object(p.env).parse({ [p.keyVariable]: 'k' })), { allowPrivate: false });
const notServed = (reason: string | undefined) => reason !== undefined && /not served|is not sync's|no Submagic template/.test(reason);

describe('provider modules', () => {
  it('have distinct names, each the name of the engine they create, and each owns its variables', async () => {
    expect(new Set(modules.map((p) => p.name)).size).toBe(modules.length);
    const seen = new Set<string>();
    for (const p of modules) {
      expect((await engineOf(p)).name).toBe(p.name);
      expect(Object.keys(p.env)).toContain(p.keyVariable);
      for (const v of Object.keys(p.env)) {
        expect(seen.has(v), v).toBe(false);
        seen.add(v);
      }
    }
  });

  it.each(modules.map((p) => [p.name, p] as const))('%s refuses every operation it does not declare', async (_name, p) => {
    const engine = await engineOf(p);
    for (const op of GENERATION_OPERATIONS.filter((o) => !p.makes.operations.includes(o))) {
      expect(engine.refuse(op, { model: p.makes.models[0] ?? 'x', lipsync_model: p.makes.models[0] ?? 'x' }, 0), `${p.name} ${op}`).toBeDefined();
    }
  });

  it.each(modules.filter((p) => p.makes.models.length > 0).map((p) => [p.name, p] as const))('%s serves each model it declares, and no other', async (_name, p) => {
    const engine = await engineOf(p);
    for (const model of p.makes.models) {
      const served = p.makes.operations.some((op) => !notServed(engine.refuse(op, { model, lipsync_model: model }, 0)));
      expect(served, `${p.name} ${model}`).toBe(true);
    }
    for (const op of p.makes.operations) expect(notServed(engine.refuse(op, { model: 'no-such-model', lipsync_model: 'no-such-model' }, 0)), op).toBe(true);
  });

  it('make Config.upstream.<name> from their variables, only when the key is set, and buildEngines creates them in the list\'s order', async () => {
    const env = Object.fromEntries(modules.map((p) => [p.keyVariable, `${p.name}-key`]));
    const config = loadConfig({ DATA_DIR: '/tmp/x', ...env });
    for (const p of modules) {
      expect((config.upstream as unknown as Record<string, unknown>)[p.name]).toEqual(p.settings(z.object(p.env).parse(env)));
      expect(loadConfig({ DATA_DIR: '/tmp/x' }).upstream[p.name as 'fal']).toBeUndefined();
    }
    expect((await buildEngines(config)).providers().map((e) => e.name)).toEqual(modules.map((p) => p.name));
  });
});
