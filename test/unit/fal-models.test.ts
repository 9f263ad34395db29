import { describe, expect, it } from 'vitest';
import { falInput } from '../../src/adapters/engines/fal/fal-models.ts';

const kling26 = { model: 'kling-2.6', prompt: 'a king walks', aspect_ratio: '9:16', duration: 5, resolution: '720p', hd: false, generate_audio: false, reference_image_urls: [], product_ids: [] };

describe('fal inputs by endpoint', () => {
  it('Kling 2.6 Pro image-to-video gets its picture as start_image_url (issue 25 item 1), and no aspect ratio: the picture sets the frame', () => {
    const { endpoint, input } = falInput({ ...kling26, reference_image_url: 'https://example.com/k.png' }, {});
    expect(endpoint).toBe('fal-ai/kling-video/v2.6/pro/image-to-video');
    expect(input).toEqual({ prompt: 'a king walks', start_image_url: 'https://example.com/k.png', duration: '5', generate_audio: false });
  });

  it('Kling 2.6 Pro text-to-video keeps its aspect ratio', () => {
    const { endpoint, input } = falInput(kling26, {});
    expect(endpoint).toBe('fal-ai/kling-video/v2.6/pro/text-to-video');
    expect(input).toEqual({ prompt: 'a king walks', aspect_ratio: '9:16', duration: '5', generate_audio: false });
  });
});
