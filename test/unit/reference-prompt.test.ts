import { describe, expect, it } from 'vitest';
import { weaveImagePrompt } from '../../src/domain/reference-prompt.ts';

const brand = { name: 'Acme', description: 'Kitchenware since 1950', colorPrimary: '#112233', colorAccent: '#445566', images: ['logo', 'reference'] as Array<'logo' | 'reference'> };
const vase = { name: 'Vase', description: 'Blue glazed ceramic', category: 'home' };
const lamp = { name: 'Lamp', description: '', category: '' };

describe('weaveImagePrompt', () => {
  it('leaves a prompt without brand or products as it is (trimmed)', () => {
    expect(weaveImagePrompt('  a red chair  ', undefined, [], 0)).toBe('a red chair');
    expect(weaveImagePrompt('a red chair', undefined, [], 3)).toBe('a red chair');
  });

  it('adds the brand identity: name, description and colours', () => {
    expect(weaveImagePrompt('a poster', { ...brand, images: [] }, [], 0)).toBe('a poster\nBrand: Acme (Kitchenware since 1950). Brand colours: #112233 and #445566.');
    expect(weaveImagePrompt('a poster', { ...brand, description: ' ', colorAccent: null, images: [] }, [], 0)).toBe('a poster\nBrand: Acme. Brand colours: #112233.');
    expect(weaveImagePrompt('a poster', { ...brand, description: '', colorPrimary: null, colorAccent: null, images: [] }, [], 0)).toBe('a poster\nBrand: Acme.');
  });

  it('adds each product with its category and description, numbered when there are several', () => {
    expect(weaveImagePrompt('on a table', undefined, [vase], 0)).toBe('on a table\nProduct: Vase (home, Blue glazed ceramic).');
    expect(weaveImagePrompt('on a table', undefined, [vase, lamp], 0)).toBe(
      'on a table\nProduct 1: Vase (home, Blue glazed ceramic).\nProduct 2: Lamp.\nAttached images, in order: the product image of Vase; the product image of Lamp.',
    );
  });

  it('names the attached images in the order they are sent: URLs, brand logo and reference, products', () => {
    const woven = weaveImagePrompt('combine', brand, [vase], 2);
    expect(woven.split('\n').at(-1)).toBe(
      'Attached images, in order: a reference image; a reference image; the brand logo; the brand reference image; the product image of Vase.',
    );
    // One image needs no order.
    expect(weaveImagePrompt('x', { ...brand, images: ['logo'] }, [], 0)).not.toMatch(/Attached images/);
  });

  it('clips long text and folds whitespace so a catalogue entry cannot swamp the prompt', () => {
    const long = weaveImagePrompt('x', { ...brand, name: 'N'.repeat(500), description: 'a\n\n b', images: [] }, [], 0);
    expect(long).toContain(`Brand: ${'N'.repeat(119)}… (a b).`);
  });
});
