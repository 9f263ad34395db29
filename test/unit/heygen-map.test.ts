import { describe, expect, it } from 'vitest';
import {
  HEYGEN_ASSET_MAX_BYTES,
  HEYGEN_ASSET_TYPES,
  HEYGEN_DEFAULT_LANGUAGES,
  HEYGEN_QUEUED_STATUSES,
  HEYGEN_WAITING_STATUSES,
  TALKING_AVATAR_FORMAT,
  heygenLanguage,
  heygenRefusal,
  translationBody,
} from '../../src/adapters/engines/heygen/heygen-map.ts';
import { LOCALIZE_MODES } from '../../src/domain/video-inputs.ts';
import { loadContract } from '../support/contract.ts';

type Schema = { enum?: unknown[]; examples?: unknown[]; maximum?: number; properties?: Record<string, Schema>; items?: Schema };
const body = (name: string) => loadContract('heygen', name).request.body as Schema;
const answer = (name: string) => (loadContract('heygen', name).responses['200'] as Schema).properties!.data!;
const values = (s: Schema | undefined) => (s?.enum ?? []).filter((v) => v !== null);

describe('HeyGen language names', () => {
  it('the whole code first, then its language, case-insensitively', () => {
    expect(heygenLanguage('pt-BR', HEYGEN_DEFAULT_LANGUAGES)).toBe('Portuguese (Brazil)');
    expect(heygenLanguage('es-AR', HEYGEN_DEFAULT_LANGUAGES)).toBe('Spanish (Argentina)');
    expect(heygenLanguage('es-PE', HEYGEN_DEFAULT_LANGUAGES)).toBe('Spanish (Spain)');
    expect(heygenLanguage('ZH-hant', HEYGEN_DEFAULT_LANGUAGES)).toBe('Chinese (Taiwanese Mandarin, Traditional)');
    expect(heygenLanguage('xq', HEYGEN_DEFAULT_LANGUAGES)).toBeUndefined();
  });
  it('every default maps a lower-case code to a name', () => {
    for (const [code, name] of Object.entries(HEYGEN_DEFAULT_LANGUAGES)) {
      expect(code).toBe(code.toLowerCase());
      expect(name.length).toBeGreaterThan(2);
    }
  });
});

describe("HeyGen's limits, from its contracts", () => {
  it('every default language name is one HeyGen documents (the languages contract), not one from memory', () => {
    const documented = answer('list-translation-languages').properties!.languages!.items!.examples as string[];
    const undocumented = [...new Set(Object.values(HEYGEN_DEFAULT_LANGUAGES))].filter((n) => !documented.includes(n));
    expect(undocumented).toEqual([]);
  });
  it("a bare pt has no default: HeyGen's guide says Portugal and Brazil are never interchangeable", () => {
    expect(heygenLanguage('pt', HEYGEN_DEFAULT_LANGUAGES)).toBeUndefined();
    expect(heygenLanguage('pt-PT', HEYGEN_DEFAULT_LANGUAGES)).toBe('Portuguese (Portugal)');
  });
  it("the talking avatar's aspect ratio and resolution are values POST /v3/videos takes", () => {
    const video = body('create-video').properties!;
    expect(values(video.aspect_ratio)).toContain(TALKING_AVATAR_FORMAT.aspect_ratio);
    expect(values(video.resolution)).toContain(TALKING_AVATAR_FORMAT.resolution);
  });
  it('localize modes are exactly the modes POST /v3/video-translations takes', () => {
    expect([...LOCALIZE_MODES].sort()).toEqual(values(body('create-video-translation').properties!.mode).sort());
  });
  it('the asset size cap and the types sent are the upload contract’s', () => {
    const file = body('upload-asset').properties!.file!.properties!;
    expect(HEYGEN_ASSET_MAX_BYTES).toBe(file.size!.maximum);
    for (const type of [...HEYGEN_ASSET_TYPES.image, ...HEYGEN_ASSET_TYPES.audio]) expect(values(file.type)).toContain(type);
  });
  it('the statuses waited on, with completed and failed, are what each read documents', () => {
    // A video: its own GET's statuses (waiting included: the create's word), and the statuses read's `queued`.
    expect([...HEYGEN_WAITING_STATUSES.video, 'completed', 'failed'].sort()).toEqual([...values(answer('get-video').properties!.status), 'queued'].sort());
    expect(HEYGEN_QUEUED_STATUSES).toEqual(['pending', 'waiting', 'queued']);
    expect([...HEYGEN_WAITING_STATUSES.translation, 'completed', 'failed'].sort()).toEqual(values(answer('get-video-translation').properties!.status).sort());
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
