import { describe, expect, it } from 'vitest';
import { HEYGEN_DEFAULT_LANGUAGES, heygenLanguage, heygenRefusal, translationBody } from '../../src/adapters/engines/heygen/heygen-map.ts';

describe('HeyGen language names', () => {
  it('the whole code first, then its language, case-insensitively', () => {
    expect(heygenLanguage('pt-BR', HEYGEN_DEFAULT_LANGUAGES)).toBe('Portuguese (Brazil)');
    expect(heygenLanguage('pt', HEYGEN_DEFAULT_LANGUAGES)).toBe('Portuguese (Portugal)');
    expect(heygenLanguage('es-AR', HEYGEN_DEFAULT_LANGUAGES)).toBe('Spanish (Spain)');
    expect(heygenLanguage('ZH-hant', HEYGEN_DEFAULT_LANGUAGES)).toBe('Chinese (Mandarin, Traditional)');
    expect(heygenLanguage('xq', HEYGEN_DEFAULT_LANGUAGES)).toBeUndefined();
  });
  it('every default maps a lower-case code to a name', () => {
    for (const [code, name] of Object.entries(HEYGEN_DEFAULT_LANGUAGES)) {
      expect(code).toBe(code.toLowerCase());
      expect(name.length).toBeGreaterThan(2);
    }
  });
});

describe('what HeyGen refuses at create', () => {
  it('operations it does not serve, a lipsync model that is not its own, a language it has no name for', () => {
    expect(heygenRefusal('ai-video', {}, HEYGEN_DEFAULT_LANGUAGES)).toMatch(/^ai-video is not served by the HeyGen engine/);
    expect(heygenRefusal('talking-avatar', { lipsync_model: 'heygen-avatar4' }, HEYGEN_DEFAULT_LANGUAGES)).toBeUndefined();
    expect(heygenRefusal('talking-avatar', { lipsync_model: 'lipsync-2.0' }, HEYGEN_DEFAULT_LANGUAGES)).toMatch(/^lipsync_model: /);
    expect(heygenRefusal('localize', { output_language: 'fr' }, HEYGEN_DEFAULT_LANGUAGES)).toBeUndefined();
    expect(heygenRefusal('localize', { output_language: 'xq' }, HEYGEN_DEFAULT_LANGUAGES)).toMatch(/^output_language: HeyGen has no language for xq/);
    expect(heygenRefusal('swap-avatar', { mode: 'pro' }, HEYGEN_DEFAULT_LANGUAGES)).toBeUndefined();
  });
});

describe('translationBody', () => {
  it('sends only the optional fields the request has', () => {
    expect(translationBody({ mode: 'speed' }, 'https://v/x.mp4', 'French (France)', 't')).toEqual({ video: { type: 'url', url: 'https://v/x.mp4' }, output_languages: ['French (France)'], mode: 'speed', title: 't' });
    expect(translationBody({ mode: 'precision', speaker_num: 3, translate_audio_only: false, enable_dynamic_duration: true }, 'u', 'L', 't')).toMatchObject({ speaker_num: 3, translate_audio_only: false, enable_dynamic_duration: true });
  });
});
