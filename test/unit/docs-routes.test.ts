import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildEngines } from '../../src/adapters/engines/from-config.ts';
import { loadConfig } from '../../src/config.ts';
import { PROVIDER_MODULES } from '../../src/adapters/engines/providers.ts';

const PROVIDERS = fs.readFileSync(new URL('../../docs/providers.md', import.meta.url), 'utf8');
// Every provider module's key set.
const KEYS = Object.fromEntries(PROVIDER_MODULES.map((p) => [p.keyVariable, 'k']));

describe("docs/providers.md's worked ENGINE_ROUTES", () => {
  it('starts with every provider key set: nothing it routes stops the start, and it names no retired model', async () => {
    const routes = /^ENGINE_ROUTES=(\S+)$/m.exec(PROVIDERS)?.[1];
    expect(routes, 'docs/providers.md shows a worked ENGINE_ROUTES line').toBeTruthy();
    const config = loadConfig({ DATA_DIR: '/tmp/adforge-docs-routes', ENGINE_ROUTES: routes, ...KEYS });
    const engines = await buildEngines(config);
    expect(engines.lifecycle().filter((f) => f.stops)).toEqual([]);
    // The only retired models it reaches are those its ai-video route leaves out (Sora, retired everywhere).
    expect(engines.lifecycle().filter((f) => f.status === 'retired').map((f) => `${f.route}:${f.name}`)).toEqual(['ai-video:sora-2', 'ai-video:sora-2-pro']);
    // Every operation of the spec reaches a real provider.
    for (const op of ['talking-avatar', 'ai-video', 'swap-avatar', 'localize', 'video-edit', 'text-to-image', 'image-edit']) {
      expect(engines.engineFor({ operation: op, model: op === 'talking-avatar' ? 'heygen-avatar4' : op === 'ai-video' ? 'kling-2.6' : op.includes('image') ? 'gpt-2' : undefined }).name, op).not.toBe('local');
    }
  });
});
