import type { VoiceRow } from '../db/types.ts';
import { PREVIEW_TEXT, VOICES, type CatalogueVoice, type EspeakVoice } from '../domain/catalogue/voices.ts';
import { AppError } from '../domain/errors.ts';
import { parseInput } from '../domain/validate.ts';
import { voicesQuery } from '../domain/voiceover-inputs.ts';
import type { SpeechEngine } from '../adapters/engines/speech/engine.ts';
import { findVoice, listVoices, upsertVoices } from '../repositories/voices.ts';
import type { Db } from '../db/pool.ts';
import type { Deps } from './deps.ts';
import { isUuid } from './ids.ts';
import { paginated, type Paginated } from './paginated.ts';

export interface Voice {
  id: string;
  name: string;
  gender: VoiceRow['gender'];
  age_group: VoiceRow['age_group'];
  accent: string;
  style: string;
  preview_audio_url: string;
}

export const catalogueVoice = (row: VoiceRow): CatalogueVoice => ({
  id: row.id,
  name: row.name,
  gender: row.gender,
  age_group: row.age_group,
  accent: row.accent as CatalogueVoice['accent'],
  style: row.style as CatalogueVoice['style'],
  espeak: row.engine_voice as unknown as EspeakVoice,
});

/** The public address of a voice's preview; the same for every team, so it needs no signature. */
export const previewUrl = (publicBaseUrl: string, voiceId: string) => `${publicBaseUrl}/voice-previews/${voiceId}.mp3`;

/** The catalogue voice a request names; a voice-provider id we do not have is 404. */
export async function requireVoice(db: Db, voiceId: string, field = 'voice_id'): Promise<CatalogueVoice> {
  const row = isUuid(voiceId) ? await findVoice(db, voiceId.toLowerCase()) : undefined;
  if (!row) throw new AppError('not_found', `Voice not found (${field})`);
  return catalogueVoice(row);
}

export async function seedVoices({ db }: Pick<Deps, 'db'>): Promise<void> {
  await upsertVoices(db, VOICES);
}

export function createVoiceService({ db, storage, config }: Pick<Deps, 'db' | 'storage' | 'config'>, speech: SpeechEngine) {
  const view = (row: VoiceRow): Voice => ({
    id: row.id,
    name: row.name,
    gender: row.gender,
    age_group: row.age_group,
    accent: row.accent,
    style: row.style,
    preview_audio_url: previewUrl(config.publicBaseUrl, row.id),
  });
  // One rendering per voice at a time, however many listeners ask for it at once.
  const rendering = new Map<string, Promise<Buffer>>();

  return {
    view,

    async list(query: unknown): Promise<Paginated<Voice>> {
      const q = parseInput(voicesQuery, query ?? {});
      const page = await listVoices(db, q);
      return paginated(page.rows.map(view), page.total, q);
    },

    require: (voiceId: string, field = 'voice_id'): Promise<CatalogueVoice> => requireVoice(db, voiceId, field),

    /** The voice reading a short line in its own language: made once, then served from storage. */
    async preview(voiceId: string): Promise<Buffer> {
      const voice = await requireVoice(db, voiceId, 'id');
      const key = `voice-previews/${voice.id}.mp3`;
      const stored = await storage.get(key);
      if (stored) return stored.bytes;
      let job = rendering.get(voice.id);
      if (!job) {
        job = (async () => {
          const text = PREVIEW_TEXT[voice.espeak.language] ?? PREVIEW_TEXT['en-us']!;
          const audio = await speech
            .textToSpeech({ text, voice }, AbortSignal.timeout(config.speechTimeoutSeconds * 1000))
            .catch((e: unknown) => {
              throw new AppError('external_service_error', `The voice engine failed to make the preview (${(e as Error).message})`);
            });
          await storage.put(key, audio.bytes, audio.mime);
          return audio.bytes;
        })().finally(() => rendering.delete(voice.id));
        rendering.set(voice.id, job);
      }
      return job;
    },
  };
}
export type VoiceService = ReturnType<typeof createVoiceService>;
