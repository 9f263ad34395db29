import { describe, expect, it } from 'vitest';
import { GENERATION_OPERATIONS, IMAGE_EFFORTS, IMAGE_MODELS, IMAGE_RESOLUTIONS, isImageOperation } from '../../src/domain/generation-types.ts';
import { GENERATION_OPERATION_TABLE } from '../../src/domain/operations.ts';
import { unmadeShare } from '../../src/domain/unmade-share.ts';

describe('unmadeShare: the credits of the outputs a generation did not make', () => {
  it('rests on every image price being a price per image times the quantity', () => {
    for (const operation of GENERATION_OPERATIONS.filter(isImageOperation)) {
      const price = GENERATION_OPERATION_TABLE[operation].price;
      for (const model of IMAGE_MODELS)
        for (const effort of IMAGE_EFFORTS)
          for (const resolution of IMAGE_RESOLUTIONS) {
            let one: number | null;
            try {
              one = price({ model, effort, resolution, quantity: 1 });
            } catch {
              continue; // an effort the model does not have
            }
            for (let quantity = 1; quantity <= 8; quantity++) expect(price({ model, effort, resolution, quantity })).toBe(one! * quantity);
          }
    }
  });

  it('gives back exactly the share of the images not made, for every k of 4', () => {
    const g = { operation: 'text-to-image', params: { model: 'gpt-2', quantity: 4 }, credits: 4 * 5 };
    expect([1, 2, 3, 4].map((made) => unmadeShare(g, made))).toEqual([15, 10, 5, 0]);
    expect(unmadeShare({ ...g, operation: 'product-shots' }, 3)).toBe(5);
    expect(unmadeShare({ ...g, operation: 'image-edit' }, 1)).toBe(15);
  });

  it('sells nothing partial otherwise: no output made, more than asked, a price not per image, or not an image', () => {
    const g = { operation: 'text-to-image', params: { model: 'fast', quantity: 4 }, credits: 8 };
    expect(unmadeShare(g, 0)).toBeUndefined();
    expect(unmadeShare(g, 5)).toBeUndefined();
    expect(unmadeShare({ ...g, credits: 9 }, 2)).toBeUndefined();
    expect(unmadeShare({ ...g, operation: 'ai-video' }, 1)).toBeUndefined();
  });
});
