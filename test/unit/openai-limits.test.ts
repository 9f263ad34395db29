import { describe, expect, it } from 'vitest';
import { FREE_SIZE_RULES, OPENAI_DEFAULT_IMAGE_MODELS, OPENAI_IMAGE_LIMITS, OPENAI_VIDEO_MODELS, SORA_SECONDS, SORA_SIZES, STANDARD_IMAGE_SIZES, imageFields, openaiRefusal, soraSize } from '../../src/adapters/engines/openai/openai-map.ts';
import { MAX_REFERENCE_IMAGES } from '../../src/domain/image-inputs.ts';
import { IMAGE_EFFORTS, IMAGE_RESOLUTIONS } from '../../src/domain/generation-types.ts';
import { loadContract, requestProblems } from '../support/contract.ts';
import { gptImage2SizeProblem } from '../support/openai-fake.ts';

/*
 * What OpenAI cannot make, read from its stored contract rather than from memory: the tables the
 * adapter refuses by at create (openai-map.ts) must say what test/contracts/openai/ says, so a
 * request the 400 lets through is one OpenAI takes, and one it refuses is one OpenAI would refuse.
 */
type Schema = { enum?: unknown[]; maximum?: number; maxItems?: number; properties?: Record<string, Schema>; allOf?: Array<{ if: Schema; then: Schema }> };
const body = (name: string) => loadContract('openai', name).request.body as Schema;
/** The per-model rule of a contract whose `if` names this model. */
const ruleFor = (s: Schema, model: string) => s.allOf!.find((r) => (r.if.properties?.model?.enum ?? []).includes(model))?.then;

const RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '2:3', '3:2', '4:5', '21:9', '9:21', '3:1', '1:3', '7:2', '100:1', '1:100'];
const IMAGE_OPS = ['text-to-image', 'image-edit', 'product-shots'] as const;
const HEADERS = { authorization: 'Bearer sk-x' };
const asText = (f: Record<string, string | number>) => Object.fromEntries(Object.entries(f).map(([k, v]) => [k, String(v)]));
const aFile = { filename: 'a.png', type: 'image/png', size: 100 };
const LONG: Record<string, number> = { '1k': 1024, '2k': 2048, '4k': 4096 };
/** The size a request asks for: its ratio, the resolution's long side, sides divisible by 16. */
function asked(ratio: string, resolution: string): string {
  const [w, h] = ratio.split(':').map(Number) as [number, number];
  const long = LONG[resolution]!;
  const short = Math.max(16, Math.round((long * Math.min(w, h)) / Math.max(w, h) / 16) * 16);
  return w >= h ? `${long}x${short}` : `${short}x${long}`;
}

describe('Sora limits equal the Videos contract', () => {
  const create = body('videos-create');

  it('durations: the seconds enum', () => {
    expect([...SORA_SECONDS]).toEqual(create.properties!.seconds!.enum);
  });

  it('sizes per model: sora-2-pro the whole enum, sora-2 its 720p rule', () => {
    expect([...SORA_SIZES['sora-2-pro']].sort()).toEqual([...create.properties!.size!.enum!].sort());
    expect([...SORA_SIZES['sora-2']].sort()).toEqual([...ruleFor(create, 'sora-2')!.properties!.size!.enum!].sort());
    expect(ruleFor(create, 'sora-2-pro')).toBeUndefined();
  });

  it('every video the adapter accepts is a create the contract takes; every other is refused at create', () => {
    for (const model of OPENAI_VIDEO_MODELS) {
      for (const duration of [2, 4, 5, 8, 10, 12, 16, 20]) {
        for (const aspect_ratio of ['16:9', '9:16']) {
          for (const hd of [false, true]) {
            const params = { model, duration, aspect_ratio, hd };
            const refused = openaiRefusal('ai-video', params);
            const problems = requestProblems(loadContract('openai', 'videos-create'), {
              headers: { ...HEADERS, 'content-type': 'multipart/form-data; boundary=x' },
              body: { model, prompt: 'p', seconds: String(duration), size: soraSize(params), input_reference: aFile },
            });
            expect(refused === undefined, `${JSON.stringify(params)}: ${refused ?? ''} / ${problems.map((p) => p.message).join('; ')}`).toBe(problems.length === 0);
          }
        }
      }
    }
  });
});

describe('GPT image limits equal the Images contracts', () => {
  const gen = body('images-generations');
  const edit = body('images-edits');

  it('the table knows every GPT image model the contracts list, and no other', () => {
    const gpt = new Set([...gen.properties!.model!.enum!, ...edit.properties!.model!.enum!].map(String).filter((m) => !m.startsWith('dall-e')));
    expect(Object.keys(OPENAI_IMAGE_LIMITS).sort()).toEqual([...gpt].sort());
  });

  it("each model's sizes: standard-size models exactly the contract's enum; free-size models under the free rule", () => {
    for (const [model, limits] of Object.entries(OPENAI_IMAGE_LIMITS)) {
      for (const c of [gen, edit]) {
        const rule = ruleFor(c, model);
        if (!c.properties!.model!.enum!.includes(model)) continue;
        expect(rule, model).toBeDefined();
        if (limits.freeSizes) expect(JSON.stringify(rule!.properties!.size), model).toContain('pattern');
        else expect(rule!.properties!.size!.enum!.filter((s) => s !== 'auto'), model).toEqual([...STANDARD_IMAGE_SIZES]);
      }
      // 2k only where free sizes are documented; 4k nowhere (4096 is past the 3840 edge).
      expect(limits.resolutions.includes('2k'), model).toBe(limits.freeSizes);
      expect(limits.resolutions.includes('4k'), model).toBe(false);
    }
    expect(FREE_SIZE_RULES.maxEdge).toBeLessThan(4096);
  });

  it('counts: our 1-8 images fit n, our 5 references fit the edit image limit', () => {
    expect(gen.properties!.n!.maximum).toBeGreaterThanOrEqual(8);
    expect(edit.properties!['image[]']!.maxItems).toBeGreaterThanOrEqual(MAX_REFERENCE_IMAGES);
  });

  it('every image request the adapter accepts is one both calls take (the fake\'s size rule included); the rest are refused at create', () => {
    for (const [ours, theirs] of [...Object.entries(OPENAI_DEFAULT_IMAGE_MODELS), ['gpt-2', 'gpt-image-1-mini'], ['gpt-2.5', 'gpt-image-2-2026-04-21']] as const) {
      const imageModels = { [ours]: theirs };
      for (const aspect_ratio of RATIOS) {
        for (const resolution of IMAGE_RESOLUTIONS) {
          for (const effort of IMAGE_EFFORTS) {
            for (const quantity of [1, 8]) {
              const params = { model: ours, aspect_ratio, resolution, effort, quantity, fast: effort === 'low' };
              const refused = IMAGE_OPS.map((op) => openaiRefusal(op, params, imageModels));
              expect(new Set(refused).size, JSON.stringify(params)).toBe(1);
              const f = imageFields(params, 'a prompt', imageModels);
              expect(f.model).toBe(theirs);
              // Accepted: what is sent must be taken. Refused: the image asked for (the ratio at the
              // resolution's long side) is one the contract does not take either.
              const sent = refused[0] === undefined ? f : { ...f, size: asked(aspect_ratio, resolution) };
              const problems = [
                ...requestProblems(loadContract('openai', 'images-generations'), { headers: { ...HEADERS, 'content-type': 'application/json' }, body: sent }),
                ...requestProblems(loadContract('openai', 'images-edits'), { headers: { ...HEADERS, 'content-type': 'multipart/form-data; boundary=x' }, body: { ...asText(sent), 'image[]': [aFile] } }),
              ].map((p) => p.message);
              const sizeRule = OPENAI_IMAGE_LIMITS[theirs]!.freeSizes ? gptImage2SizeProblem(sent.size) : undefined;
              if (sizeRule) problems.push(sizeRule);
              expect(refused[0] === undefined, `${theirs} ${JSON.stringify(params)} -> ${sent.size}: ${refused[0] ?? ''} / ${problems.join('; ')}`).toBe(problems.length === 0);
            }
          }
        }
      }
    }
  });

  it('the 400 names the limit: the resolutions of the model, and the ratios a free size takes', () => {
    // A model of the standard sizes only, set in OPENAI_IMAGE_MODELS: 1k only.
    expect(openaiRefusal('text-to-image', { model: 'gpt-2', aspect_ratio: '1:1', resolution: '2k' }, { 'gpt-2': 'gpt-image-1.5' })).toBe('resolution: gpt-2 on OpenAI makes 1k images only, not 2k');
    expect(openaiRefusal('text-to-image', { model: 'gpt-2', aspect_ratio: '1:1', resolution: '2k' })).toBeUndefined();
    expect(openaiRefusal('text-to-image', { model: 'gpt-2.5', aspect_ratio: '1:1', resolution: '4k' })).toBe('resolution: gpt-2.5 on OpenAI makes 1k or 2k images, not 4k');
    expect(openaiRefusal('image-edit', { model: 'gpt-2.5', aspect_ratio: '7:2', resolution: '2k' })).toBe('aspect_ratio: gpt-2.5 on OpenAI makes 2k images from 1:3 to 3:1, not 7:2');
    // At 1k every ratio has its nearest standard size.
    expect(openaiRefusal('image-edit', { model: 'gpt-2.5', aspect_ratio: '7:2', resolution: '1k' })).toBeUndefined();
  });
});
