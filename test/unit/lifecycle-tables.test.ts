import { describe, expect, it } from 'vitest';
import { buildEngines } from '../../src/adapters/engines/from-config.ts';
import { alternativeFor, judge, namesOf, namesUnder, operationsOf, statusOn, type LifecycleEntry, type LifecycleTable } from '../../src/adapters/engines/lifecycle.ts';
import { PROVIDER_MODULES } from '../../src/adapters/engines/providers.ts';
import { loadConfig } from '../../src/config.ts';
import { ALL_LIFECYCLE_TABLES } from '../support/lifecycle-docs.ts';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const TODAY = '2026-12-07';
const table = (provider: string) => ALL_LIFECYCLE_TABLES.find((t) => t.provider === provider)!;
const entry = (provider: string, id: string) => table(provider).entries.find((e) => e.id === id)!;

describe('the lifecycle tables', () => {
  it('one per provider adforge knows, named for it, each dated and sourced', () => {
    for (const p of PROVIDER_MODULES) expect(p.lifecycle.provider, p.name).toBe(p.name);
    for (const t of ALL_LIFECYCLE_TABLES) {
      expect(t.read, t.provider).toMatch(DAY);
      expect(t.entries.length > 0 || Boolean(t.note), `${t.provider}: entries, or a note saying why none`).toBe(true);
      expect(new Set(t.entries.map((e) => e.id)).size, `${t.provider}: ids once each`).toBe(t.entries.length);
      for (const e of t.entries) {
        expect(e.date, e.id).toMatch(DAY);
        expect(e.date <= t.read, `${e.id}: dated no later than the table was read`).toBe(true);
        if (e.shutdown) expect(e.status === 'deprecated' && DAY.test(e.shutdown), `${e.id}: a shutdown date only on a deprecated entry`).toBe(true);
        expect(e.source.length, `${e.id}: its source`).toBeGreaterThan(10);
        expect(e.source, `${e.id}: no link, the source in words`).not.toMatch(/https?:\/\//);
        for (const n of e.serves) expect(operationsOf(n).length, `${e.id} serves ${n}, one of our names`).toBeGreaterThan(0);
      }
    }
  });

  it("agree with each adapter's defaults: every id an engine sends our name to is in its table, serving that name", async () => {
    const keys = Object.fromEntries(PROVIDER_MODULES.filter((p) => p.name !== 'comfyui').map((p) => [p.keyVariable, 'k']));
    const engines = await buildEngines(loadConfig({ DATA_DIR: '/tmp/adforge-lifecycle-tables', ...keys, ENGINE_ROUTES: '*=local' }));
    for (const p of PROVIDER_MODULES.filter((m) => m.lifecycle.entries.length > 0)) {
      const engine = engines.byName(p.name)!;
      for (const name of new Set([...p.makes.models, ...namesOf(p.lifecycle)])) {
        const ids = engine.targets?.(name) ?? [];
        const defaults = p.lifecycle.entries.filter((e) => e.serves.includes(name)).map((e) => e.id);
        expect([...ids].sort(), `${p.name} ${name}`).toEqual([...defaults].sort());
      }
    }
  });

  it('hold what the providers said: Veo 3.1 preview on Gemini shut 2026-10-22, Sora gone at fal and OpenAI, gpt-image-1.5 shut 2026-12-01', () => {
    for (const id of ['veo-3.1-generate-preview', 'veo-3.1-fast-generate-preview']) expect(entry('gemini', id)).toMatchObject({ status: 'retired', date: '2026-10-22', successor: 'gemini-omni-1.1-flash' });
    for (const e of table('fal').entries.filter((x) => x.id.startsWith('fal-ai/sora-2'))) expect(e).toMatchObject({ status: 'retired', date: '2026-08-02' });
    expect(table('fal').entries.filter((x) => x.id.startsWith('fal-ai/sora-2')).length).toBe(4);
    for (const id of ['sora-2', 'sora-2-pro']) expect(entry('openai', id)).toMatchObject({ status: 'retired', date: '2026-09-24' });
    expect(entry('openai', 'gpt-image-1.5')).toMatchObject({ status: 'retired', date: '2026-12-01' });
    expect(entry('gemini', 'gemini-3.1-flash-image')).toMatchObject({ status: 'deprecated', date: '2026-10-06', successor: 'gemini-nano-banana-2.1' });
    expect(entry('gemini', 'gemini-3.1-flash-image').shutdown).toBeUndefined();
  });
});

describe('the lifecycle decision', () => {
  const fake = (entries: LifecycleEntry[], extra: Partial<LifecycleTable> = {}): LifecycleTable => ({ provider: 'x', read: TODAY, entries, ...extra });
  const e = (id: string, status: LifecycleEntry['status'], extra: Partial<LifecycleEntry> = {}): LifecycleEntry => ({ id, serves: ['veo-3.1'], status, date: '2026-01-01', source: 'a page', ...extra });

  it('a deprecated entry counts as retired from its announced shutdown on, dated by it', () => {
    const fading = e('m', 'deprecated', { shutdown: '2026-12-07' });
    expect(statusOn(fading, '2026-12-06')).toEqual({ status: 'deprecated', date: '2026-01-01' });
    expect(statusOn(fading, '2026-12-07')).toEqual({ status: 'retired', date: '2026-12-07' });
    expect(statusOn(e('m', 'deprecated'), '2099-01-01').status).toBe('deprecated');
  });

  it('a name fares as the worst of the ids it uses; ids the table does not know are left to the live check', () => {
    const t = fake([e('a', 'live'), e('b', 'deprecated'), e('c', 'retired')]);
    expect(judge('r', t, 'veo-3.1', ['a', 'b'], TODAY)?.status).toBe('deprecated');
    expect(judge('r', t, 'veo-3.1', ['a', 'c', 'b'], TODAY)).toMatchObject({ status: 'retired', entry: { id: 'c' }, route: 'r', provider: 'x' });
    expect(judge('r', t, 'veo-3.1', ['unknown'], TODAY)).toBeUndefined();
  });

  it('a route key sends its own name, its operation\'s names, or every name (*)', () => {
    const t = fake([e('a', 'live'), e('b', 'live', { serves: ['kling-2.6'] }), e('c', 'live', { serves: ['fast'] }), e('d', 'live', { serves: ['swap-avatar'] })]);
    expect(namesUnder('veo-3.1', t)).toEqual(['veo-3.1']);
    expect(namesUnder('ai-video', t)).toEqual(['veo-3.1', 'kling-2.6']);
    expect(namesUnder('text-to-image', t)).toEqual(['fast']);
    expect(namesUnder('swap-avatar', t)).toEqual(['swap-avatar']);
    expect(namesUnder('*', t)).toEqual(['veo-3.1', 'kling-2.6', 'fast', 'swap-avatar']);
    expect(namesUnder('sora-2', t)).toEqual([]);
  });

  it('never suggests anything retired: for every retired name of every table, the alternative is live or deprecated, or there is none', () => {
    for (const t of ALL_LIFECYCLE_TABLES) {
      for (const retired of t.entries.filter((x) => statusOn(x, TODAY).status === 'retired')) {
        for (const name of retired.serves) {
          const a = alternativeFor({ provider: t.provider, name, entry: retired }, ALL_LIFECYCLE_TABLES, TODAY);
          if (!a) continue;
          if (a.kind === 'setting') expect(statusOn(entry(t.provider, a.id), TODAY).status, a.text).not.toBe('retired');
          else for (const x of table(a.provider).entries.filter((y) => y.serves.includes(name))) expect(statusOn(x, TODAY).status, `${a.text}: ${x.id}`).not.toBe('retired');
        }
      }
    }
  });

  it('names fal for Veo, nothing for Sora (retired everywhere), and the live OpenAI model for a retired one set by an operator', () => {
    const alt = (provider: string, name: string, id: string) => alternativeFor({ provider, name, entry: entry(provider, id) }, ALL_LIFECYCLE_TABLES, TODAY)?.text;
    expect(alt('gemini', 'veo-3.1', 'veo-3.1-generate-preview')).toBe('veo-3.1=fal');
    expect(alt('gemini', 'veo-3.1-fast', 'veo-3.1-fast-generate-preview')).toBe('veo-3.1-fast=fal');
    expect(alt('openai', 'sora-2', 'sora-2')).toBeUndefined();
    expect(alt('fal', 'sora-2-pro', 'fal-ai/sora-2/text-to-video/pro')).toBeUndefined();
    expect(alt('openai', 'gpt-2', 'gpt-image-1.5')).toBe('OPENAI_IMAGE_MODELS=gpt-2=gpt-image-2');
    // A live alternative is preferred to a deprecated one.
    const tables = [fake([e('old', 'retired')]), { ...fake([e('y1', 'deprecated')]), provider: 'y' }, { ...fake([e('z1', 'live')]), provider: 'z' }];
    expect(alternativeFor({ provider: 'x', name: 'veo-3.1', entry: e('old', 'retired') }, tables, TODAY)?.text).toBe('veo-3.1=z');
  });
});
