import { describe, expect, it } from 'vitest';
import { imageEditInput, textToImageInput } from '../../src/domain/image-inputs.ts';
import { aiVideoInput, localizeInput, swapAvatarInput, talkingAvatarInput, videoEditInput } from '../../src/domain/video-inputs.ts';
import { GENERATION_OPERATIONS, IMAGE_MODELS, VIDEO_MODELS } from '../../src/domain/generation-types.ts';
import { spendCandidates } from '../../src/domain/smallest-requests.ts';

const inputs = { avatarId: '00000000-0000-4000-8000-000000000001', voiceId: 'v1', templateId: 'bold-pop' };
const full = { ...inputs, videoUrl: 'https://media.example/clip.mp4', imageUrl: 'https://media.example/face.png' };
const SCHEMAS = { 'ai-video': aiVideoInput, 'text-to-image': textToImageInput, 'image-edit': imageEditInput, 'talking-avatar': talkingAvatarInput, 'swap-avatar': swapAvatarInput, localize: localizeInput, 'video-edit': videoEditInput } as const;

describe('the smallest requests of a route (providers check --spend)', () => {
  it('every candidate of every route key is a body the create endpoint accepts', () => {
    for (const key of [...VIDEO_MODELS, ...IMAGE_MODELS, 'heygen-avatar4', 'lipsync-2.0', ...GENERATION_OPERATIONS, '*']) {
      for (const c of spendCandidates(key, full).candidates) {
        const schema = SCHEMAS[c.operation as keyof typeof SCHEMAS];
        expect(schema, `${key}: ${c.operation}`).toBeDefined();
        const parsed = schema.safeParse(c.body);
        expect(parsed.success, `${key}: ${JSON.stringify(c.body)}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      }
    }
  });

  it("a model key asks only that model, shortest first and lowest resolution first", () => {
    const { candidates } = spendCandidates('veo-3.1', inputs);
    expect(new Set(candidates.map((c) => c.body.model))).toEqual(new Set(['veo-3.1']));
    expect(candidates[0]!.body).toMatchObject({ duration: 4, resolution: '720p', generate_audio: false });
    const durations = candidates.map((c) => c.body.duration as number);
    expect(durations).toEqual([...durations].sort((a, b) => a - b));
    expect(spendCandidates('kling-o3', inputs).candidates[0]!.body).toMatchObject({ quality: 'standard', duration: 3 });
    expect(spendCandidates('gpt-2', inputs).candidates).toEqual([{ operation: 'text-to-image', body: expect.objectContaining({ model: 'gpt-2', quantity: 1, effort: 'low', resolution: '1k' }) }]);
    expect(spendCandidates('lipsync-2.0', inputs).candidates[0]).toMatchObject({ operation: 'talking-avatar', body: { lipsync_model: 'lipsync-2.0', avatar_id: inputs.avatarId, voice_id: 'v1' } });
  });

  it('a route that needs a public input is skipped without it, naming the option', () => {
    expect(spendCandidates('localize', inputs)).toEqual({ candidates: [], needs: '--video-url (a public video the provider can fetch)' });
    expect(spendCandidates('seedance-2.0-frames', inputs)).toEqual({ candidates: [], needs: '--image-url (a public image)' });
    expect(spendCandidates('seedance-2.0-frames', full).candidates[0]!.body).toMatchObject({ first_frame_image_url: full.imageUrl });
    expect(spendCandidates('video-edit', full).candidates).toHaveLength(1);
  });

  it('an operation key or * covers every model it routes', () => {
    expect(new Set(spendCandidates('ai-video', inputs).candidates.map((c) => c.body.model))).toEqual(new Set(VIDEO_MODELS.filter((m) => !m.includes('frames'))));
    expect(new Set(spendCandidates('*', full).candidates.map((c) => c.operation))).toEqual(new Set(GENERATION_OPERATIONS.filter((o) => o !== 'product-shots')));
  });
});
