import { describe, expect, it } from 'vitest';
import { FAL_DEFAULT_ENDPOINTS, FAL_VEO_RATIOS, KLING_RATIOS, SEEDANCE_MAX_IMAGES, falInput, falRefusal } from '../../src/adapters/engines/fal/fal-models.ts';
import { VIDEO_MODELS } from '../../src/domain/generation-types.ts';
import { aiVideoInput } from '../../src/domain/video-inputs.ts';
import { KLING_QUALITIES, VIDEO_MODEL_TABLE } from '../../src/domain/video-models.ts';
import { contractsOf, requestProblems, type Contract } from '../support/contract.ts';
import { resultContractOf, submitContractName } from '../support/fal-fake.ts';

/*
 * The fal contracts (test/contracts/fal/) against what the adapter sends and refuses: every
 * endpoint it may call has its contract with its provenance; the refusal table (the 400 at create)
 * holds the values the contracts' enums and bounds allow; and every request the spec accepts and
 * the adapter does not refuse is one fal's schema takes.
 */
const contracts = contractsOf('fal');
const endpoints = [...new Set(Object.values(FAL_DEFAULT_ENDPOINTS))];
const submit = (endpoint: string): Contract => contracts[submitContractName(endpoint)]!;
type Schema = { enum?: unknown[]; maxItems?: number; properties?: Record<string, Schema>; required?: string[] };
const field = (endpoint: string, name: string): Schema | undefined => (submit(endpoint).request.body as Schema).properties?.[name];

describe('fal contracts: provenance', () => {
  it('every endpoint of FAL_DEFAULT_ENDPOINTS has its submit contract, refreshed from its own OpenAPI document', () => {
    for (const endpoint of endpoints) {
      const c = submit(endpoint);
      expect(c, endpoint).toBeDefined();
      expect(c.call).toBe(`POST /${endpoint}`);
      expect(c.request.path).toBe(`/${endpoint}`);
      expect(c.source.url).toMatch(/^https:\/\/github\.com\/fal-ai\/fal-js\/blob\/[0-9a-f]{40}\/libs\/client\/src\/types\/endpoints\.ts$/);
      expect(c.source.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(c.source.refresh).toEqual({ url: `https://fal.ai/api/openapi/queue/openapi.json?endpoint_id=${endpoint}`, pointer: expect.stringMatching(/^\/components\/schemas\/\w+Input$/), compare: 'body' });
      expect((c.request.body as { additionalProperties?: boolean }).additionalProperties, endpoint).toBe(false);
      expect(c.also?.some((a) => a.url === `https://fal.ai/models/${endpoint}/llms.txt`), endpoint).toBe(true);
    }
  });

  it('every endpoint has exactly one result contract for its output, and each result contract lists only endpoints of the table', () => {
    for (const endpoint of endpoints) {
      const shapes = Object.entries(contracts).filter(([n, c]) => n.startsWith('result-') && (c.also ?? []).some((a) => a.url.endsWith(`endpoint_id=${endpoint}`)));
      expect(shapes.map(([n]) => n), endpoint).toHaveLength(1);
      expect(resultContractOf(endpoint)).toBe(shapes[0]![0]);
    }
    for (const [name, c] of Object.entries(contracts).filter(([n]) => n.startsWith('result-'))) {
      const listed = (c.also ?? []).map((a) => new URL(a.url).searchParams.get('endpoint_id')).filter(Boolean);
      expect(listed.every((e) => endpoints.includes(e!)), name).toBe(true);
      expect(c.source.refresh).toMatchObject({ compare: 'response', pointer: expect.stringMatching(/Output$/) });
      // Every output names the video adforge reads.
      expect((c.responses['200'] as Schema).required, name).toContain('video');
    }
  });

  it('the queue calls, the webhook keys and the free check each have their contract', () => {
    for (const name of ['queue-status', 'queue-cancel', 'webhook-keys', 'models-find']) {
      const c = contracts[name]!;
      expect(c, name).toBeDefined();
      expect(c.source.retrieved).toBe('2026-11-26');
      expect(c.source.refresh, name).toBeTruthy();
    }
  });
});

describe('fal limits: the refusal table is what the contracts take', () => {
  it('aspect ratios: Kling 2.6 and O3 take 16:9, 9:16, 1:1; Veo 3.1 16:9, 9:16 (its text-to-video enum)', () => {
    for (const e of ['fal-ai/kling-video/v2.6/pro/text-to-video', 'fal-ai/kling-video/o3/pro/text-to-video', 'fal-ai/kling-video/o3/standard/reference-to-video']) expect(field(e, 'aspect_ratio')?.enum, e).toEqual([...KLING_RATIOS]);
    for (const e of ['fal-ai/veo3.1', 'fal-ai/veo3.1/fast']) expect(field(e, 'aspect_ratio')?.enum, e).toEqual([...FAL_VEO_RATIOS]);
    // Veo's image endpoints also take auto (the picture's shape), which adforge never sends.
    expect(field('fal-ai/veo3.1/image-to-video', 'aspect_ratio')?.enum).toEqual(['auto', ...FAL_VEO_RATIOS]);
  });

  it('Seedance reference-to-video takes at most SEEDANCE_MAX_IMAGES images', () => {
    for (const e of ['bytedance/seedance-2.0/reference-to-video', 'bytedance/seedance-2.0/fast/reference-to-video']) expect(field(e, 'image_urls')?.maxItems, e).toBe(SEEDANCE_MAX_IMAGES);
  });

  it('durations: every duration the spec allows is one of the enum values of each endpoint of its model', () => {
    const asSent = (model: string, s: number): unknown => (model.startsWith('veo') ? `${s}s` : model.startsWith('sora') ? s : String(s));
    for (const model of VIDEO_MODELS) {
      const rule = VIDEO_MODEL_TABLE[model].durations;
      const seconds = rule.kind === 'list' ? rule.values : Array.from({ length: rule.max - rule.min + 1 }, (_, i) => rule.min + i);
      const mine = Object.entries(FAL_DEFAULT_ENDPOINTS).filter(([k]) => k === model || k.startsWith(`${model}:`) || (model === 'kling-o3' && k.startsWith('kling-o3-')));
      expect(mine.length, model).toBeGreaterThan(0);
      for (const [, e] of mine) for (const s of seconds) expect(field(e, 'duration')?.enum, `${model} ${s}s on ${e}`).toContain(asSent(model, s));
    }
  });

  it('resolutions: sora-2 makes 720p only (hd refused), sora-2-pro 1080p; the Seedance -fast endpoints no 1080p, as the spec', () => {
    expect(field('fal-ai/sora-2/image-to-video', 'resolution')?.enum).not.toContain('1080p');
    expect(falRefusal({ model: 'sora-2', hd: true, aspect_ratio: '16:9' })).toMatch(/^hd: /);
    for (const e of ['fal-ai/sora-2/text-to-video/pro', 'fal-ai/sora-2/image-to-video/pro']) expect(field(e, 'resolution')?.enum, e).toContain('1080p');
    for (const model of ['seedance-2.0-fast', 'seedance-2.0-frames-fast'] as const) {
      for (const [k, e] of Object.entries(FAL_DEFAULT_ENDPOINTS).filter(([k]) => k === model || k.startsWith(`${model}:`))) {
        expect(field(e, 'resolution')?.enum, k).toEqual(expect.arrayContaining([...VIDEO_MODEL_TABLE[model].resolutions]));
      }
    }
  });

  it('every request the spec accepts is refused at create (400 naming the field) or one the endpoint schema takes', () => {
    const ratios = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'auto', '2:1'];
    const image = 'https://example.com/picture.png';
    const kinds: Array<Record<string, unknown>> = [
      {},
      { reference_image_url: image },
      { first_frame_image_url: image },
      { first_frame_image_url: image, last_frame_image_url: `${image}?last` },
      { reference_image_urls: [image, `${image}?2`] },
    ];
    let checked = 0;
    for (const model of VIDEO_MODELS) {
      const spec = VIDEO_MODEL_TABLE[model];
      const rule = spec.durations;
      const seconds = rule.kind === 'list' ? rule.values : [rule.min, Math.round((rule.min + rule.max) / 2), rule.max];
      for (const aspect_ratio of ratios)
        for (const duration of seconds)
          for (const resolution of spec.resolutions)
            for (const extra of kinds)
              for (const more of [{}, { hd: true }, { generate_audio: true }, ...KLING_QUALITIES.map((quality) => ({ quality }))]) {
                const parsed = aiVideoInput.safeParse({ model, prompt: 'a lighthouse', aspect_ratio, duration, resolution, ...extra, ...more });
                if (!parsed.success) continue;
                const params = parsed.data as unknown as Record<string, unknown>;
                const attached = [...(params.reference_image_url ? [String(params.reference_image_url)] : []), ...(params.reference_image_urls as string[])];
                const refusal = falRefusal(params, attached.length);
                if (refusal) {
                  expect(refusal, JSON.stringify(params)).toMatch(/^[a-z_]+: /);
                  continue;
                }
                const { endpoint, input } = falInput({ ...params, prompt: 'a lighthouse' }, {}, attached);
                const c = submit(endpoint);
                expect(requestProblems(c, { headers: { authorization: 'Key k', 'content-type': 'application/json' }, query: {}, body: input }), `${JSON.stringify(params)} -> ${endpoint}`).toEqual([]);
                checked++;
              }
    }
    expect(checked).toBeGreaterThan(500);
  });
});
