import { describe, expect, it } from 'vitest';
import { OPENAI_LIFECYCLE } from '../../src/adapters/engines/openai/openai-lifecycle.ts';
import { OPENAI_DEFAULT_IMAGE_MODELS, openaiRefusal } from '../../src/adapters/engines/openai/openai-map.ts';
import { loadContract } from '../support/contract.ts';

const entry = (id: string) => OPENAI_LIFECYCLE.entries.find((e) => e.id === id);
type Schema = { enum?: unknown[]; properties?: Record<string, Schema> };
const bodyOf = (name: string) => loadContract('openai', name).request.body as Schema;

describe('OpenAI image models (issue 25, item 7)', () => {
  it('gpt-2 and gpt-2.5 go to gpt-image-2: OpenAI shut gpt-image-1.5 down on 2026-12-01, and no other model of the stored contract is served', () => {
    expect(OPENAI_DEFAULT_IMAGE_MODELS).toEqual({ 'gpt-2': 'gpt-image-2', 'gpt-2.5': 'gpt-image-2' });
    expect(entry('gpt-image-1.5')).toMatchObject({ status: 'retired', date: '2026-12-01' });
    for (const m of Object.values(OPENAI_DEFAULT_IMAGE_MODELS)) expect(entry(m)?.status).toBe('live');
  });

  it('each default is a model both Images calls list in the stored contract', () => {
    for (const call of ['images-generations', 'images-edits']) {
      for (const m of Object.values(OPENAI_DEFAULT_IMAGE_MODELS)) expect(bodyOf(call).properties!.model!.enum, `${call}: ${m}`).toContain(m);
    }
  });
});

describe('Sora on OpenAI is retired (issue 25, item 6)', () => {
  it('the lifecycle table marks sora-2 and sora-2-pro retired on 2026-09-24, with no successor', () => {
    for (const id of ['sora-2', 'sora-2-pro']) expect(entry(id)).toMatchObject({ serves: [id], status: 'retired', date: '2026-09-24' });
    for (const id of ['sora-2', 'sora-2-pro']) expect(entry(id)?.successor).toBeUndefined();
  });

  it('the date is the one the official SDK gives (stored beside the Videos contract)', () => {
    const sdk = loadContract('openai', 'videos-create').also?.find((a) => a.url.includes('openai/openai-node') && a.url.endsWith('src/resources/videos.ts'));
    expect(sdk?.gave).toContain('permanently shut down on September 24, 2026');
  });

  it("the adapter's refusals for video say the Videos API is shut down, and suggest no route (fal retired Sora too)", () => {
    for (const [op, params] of [
      ['ai-video', { model: 'sora-2', duration: 16, aspect_ratio: '16:9' }],
      ['ai-video', { model: 'sora-2', duration: 8, aspect_ratio: '16:9', hd: true }],
      ['ai-video', { model: 'veo-3.1', duration: 8, aspect_ratio: '16:9' }],
    ] as const) {
      expect(openaiRefusal(op, params), JSON.stringify(params)).toMatch(/OpenAI shut its Videos \(Sora\) API down on 2026-09-24/);
      expect(openaiRefusal(op, params)).not.toMatch(/fal/);
    }
  });
});
