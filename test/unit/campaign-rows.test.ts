import { describe, expect, it } from 'vitest';
import { CAMPAIGN_FIELDS, CAMPAIGN_TYPES, columnName, fieldOfNotFound, rowToRequest } from '../../src/domain/campaign-rows.ts';

describe('the fields of each campaign type', () => {
  it('are read off the endpoint schemas, with the kind each cell is read as', () => {
    expect(Object.keys(CAMPAIGN_FIELDS).sort()).toEqual([...CAMPAIGN_TYPES].sort());
    expect(CAMPAIGN_FIELDS['talking-avatar']).toEqual({ avatar_id: 'string', avatar_type: 'string', script: 'string', voice_id: 'string', voiceover_id: 'string', lipsync_model: 'string' });
    expect(CAMPAIGN_FIELDS['ai-video']).toMatchObject({ duration: 'number', hd: 'boolean', generate_audio: 'boolean', reference_image_urls: 'list', product_ids: 'list', prompt: 'string' });
    expect(CAMPAIGN_FIELDS.localize).toMatchObject({ speaker_num: 'number', translate_audio_only: 'boolean', enable_dynamic_duration: 'boolean', width: 'number' });
    expect(CAMPAIGN_FIELDS['text-to-image']).toMatchObject({ quantity: 'number', fast: 'boolean', product_ids: 'list' });
    expect(CAMPAIGN_FIELDS['image-edit']).toMatchObject({ reference_image_urls: 'list' });
    expect(CAMPAIGN_FIELDS['text-to-speech']).toEqual({ text: 'string', voice_id: 'string', model: 'string', voice_settings: 'object' });
  });
});

describe('rowToRequest', () => {
  it('turns cells into the endpoint body: numbers, booleans, | lists, dotted object columns; empty cells are absent', () => {
    expect(rowToRequest({ type: 'ai-video', row_key: ' a1 ', prompt: 'waves', duration: '5', hd: 'TRUE', generate_audio: 'no', product_ids: ' x | y ||', model: 'sora-2', aspect_ratio: '16:9', resolution: '' })).toEqual({
      ok: true,
      type: 'ai-video',
      rowKey: 'a1',
      body: { prompt: 'waves', duration: 5, hd: true, generate_audio: false, product_ids: ['x', 'y'], model: 'sora-2', aspect_ratio: '16:9' },
    });
    expect(rowToRequest({ type: 'text-to-speech', text: 'Hi', voice_id: 'v', 'voice_settings.stability': '0.4', 'voice_settings.similarity_boost': '1' })).toMatchObject({
      ok: true,
      body: { text: 'Hi', voice_id: 'v', voice_settings: { stability: 0.4, similarity_boost: 1 } },
    });
  });

  it('keeps line breaks and commas inside text, trimming only the ends', () => {
    const r = rowToRequest({ type: 'text-to-speech', text: '  Line one,\nline two.  ', voice_id: 'v' });
    expect(r.ok && r.body.text).toBe('Line one,\nline two.');
  });

  it('reads the type without regard to case or spaces, and every boolean spelling', () => {
    for (const [cell, value] of [['true', true], ['Yes', true], ['y', true], ['1', true], ['FALSE', false], ['no', false], ['N', false], ['0', false]] as const) {
      const r = rowToRequest({ type: ' Text-To-Image ', prompt: 'p', fast: cell });
      expect(r.ok && r.body.fast, cell).toBe(value);
    }
  });

  it('reads numbers strictly', () => {
    for (const ok of ['5', '-1', '+2', '2.5', '.5', '1e3']) expect(rowToRequest({ type: 'ai-video', duration: ok }).ok, ok).toBe(true);
    for (const bad of ['five', '5s', '1,5', '0x10', 'NaN', 'Infinity']) {
      expect(rowToRequest({ type: 'ai-video', duration: bad }), bad).toMatchObject({ ok: false, problems: [{ field: 'duration', message: 'must be a number' }] });
    }
    expect(rowToRequest({ type: 'text-to-image', fast: 'maybe' })).toMatchObject({ ok: false, problems: [{ field: 'fast', message: 'must be true or false' }] });
  });

  it('names a missing or unknown type', () => {
    expect(rowToRequest({ prompt: 'p' })).toEqual({ ok: false, type: null, rowKey: null, problems: [{ field: 'type', message: 'is required' }] });
    expect(rowToRequest({ type: 'video' })).toMatchObject({ ok: false, problems: [{ field: 'type', message: expect.stringMatching(/^must be one of talking-avatar, ai-video/) }] });
  });

  it('refuses a filled cell in a column its type does not have (a typo), but not an empty one', () => {
    expect(rowToRequest({ type: 'text-to-image', prompt: 'p', scirpt: 'x', voice_id: 'v' })).toMatchObject({
      ok: false,
      problems: [{ field: 'scirpt', message: 'is not a field of text-to-image' }, { field: 'voice_id', message: 'is not a field of text-to-image' }],
    });
    expect(rowToRequest({ type: 'text-to-image', prompt: 'p', script: '' }).ok).toBe(true);
    expect(rowToRequest({ type: 'text-to-speech', text: 't', voice_id: 'v', voice_settings: '0.5' })).toMatchObject({ ok: false, problems: [{ field: 'voice_settings' }] });
    expect(rowToRequest({ type: 'text-to-image', 'prompt.x': 'p' })).toMatchObject({ ok: false, problems: [{ field: 'prompt.x' }] });
  });

  it('bounds row_key', () => {
    expect(rowToRequest({ type: 'text-to-image', row_key: 'k'.repeat(201) })).toMatchObject({ ok: false, problems: [{ field: 'row_key' }] });
  });
});

describe('helpers', () => {
  it('normalises headers and names the field of a not-found', () => {
    expect(columnName('  Voice_ID ')).toBe('voice_id');
    expect(fieldOfNotFound('Voice not found (voice_id)')).toBe('voice_id');
    expect(fieldOfNotFound('Voiceover not found')).toBe('voiceover_id');
    expect(fieldOfNotFound('Avatar not found')).toBe('avatar_id');
    expect(fieldOfNotFound('Caption template not found')).toBe('template_id');
    expect(fieldOfNotFound('Style not found')).toBe('style_id');
    expect(fieldOfNotFound('Product not found')).toBe('product_id');
    expect(fieldOfNotFound('Generation not found')).toBe('generation_id');
    expect(fieldOfNotFound('Something else')).toBe('type');
  });
});
