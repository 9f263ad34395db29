import { createHash, randomUUID } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import pLimit from 'p-limit';
import type { z } from 'zod';
import type { CatalogueVoice } from '../domain/catalogue/voices.ts';
import { AppError } from '../domain/errors.ts';
import { SPEECH_TO_SPEECH_MAX_SECONDS, speechToSpeechCredits, TEXT_TO_SPEECH_CREDITS } from '../domain/pricing.ts';
import { parseInput } from '../domain/validate.ts';
import { MAX_SOURCE_AUDIO_BYTES, speechToSpeechInput, textToSpeechInput } from '../domain/voiceover-inputs.ts';
import { EngineError } from '../adapters/engines/render-job.ts';
import type { SpeechAudio } from '../adapters/engines/speech/mp3.ts';
import type { SpeechEngine } from '../adapters/engines/speech/engine.ts';
import { audioDuration } from '../adapters/engines/speech/voice-change.ts';
import { download, downloadErrorToAppError } from '../adapters/net/download.ts';
import { uploadIdOf } from '../domain/uploads.ts';
import { checkUploadUses, uploadKeyOf } from './uploads.ts';
import { debitCredits } from '../repositories/credits.ts';
import { heldCredits, placeHold, releaseHold } from '../repositories/credit-holds.ts';
import { lockTeam } from '../repositories/teams.ts';
import { appendLedger } from '../repositories/ledger.ts';
import { findTeamVoiceover, findTeamVoiceoversByIds, findVoiceoverById, insertVoiceover } from '../repositories/voiceovers.ts';
import type { VoiceoverRow, VoiceoversTable } from '../db/types.ts';
import type { Insertable } from 'kysely';
import type { Deps } from './deps.ts';
import type { Principal } from './principal.ts';
import { requireUuid } from './ids.ts';
import { requestHash, runIdempotent, storedOutcome, type IdempotencyRequest, type RecordedOutcome } from './idempotency.ts';
import type { VoiceService } from './voices.ts';

// A hold outlives the longest the speech work may take by this much; past it, its process is gone.
const HOLD_MARGIN_SECONDS = 60;

export interface Voiceover {
  id: string;
  status: 'completed';
  duration: number;
  audio_url: string;
}

/** Stored under the Idempotency-Key: the link is signed afresh on every answer, replays included. */
interface StoredVoiceover {
  id: string;
  status: 'completed';
  duration: number;
}

export async function voiceoverView(storage: Deps['storage'], row: VoiceoverRow): Promise<Voiceover> {
  return { id: row.id, status: 'completed', duration: row.duration_seconds, audio_url: await storage.signedUrl(row.audio_key) };
}

/**
 * MP3 and Opus framing pad an exactly two-minute recording to 120.03 s or so (our own MP3 of a
 * 120 s source included): up to 50 ms over the limit still counts as 120 s. 120.1 s does not.
 */
const FRAMING_SECONDS = 0.05;
const withinFraming = (s: number) => (s > SPEECH_TO_SPEECH_MAX_SECONDS && s <= SPEECH_TO_SPEECH_MAX_SECONDS + FRAMING_SECONDS ? SPEECH_TO_SPEECH_MAX_SECONDS : s);

const SOURCE_DOWNLOAD_TIMEOUT_MS = 30_000;
/** Durations are reported to the millisecond; the MP3 frame grid makes finer digits noise. */
const roundSeconds = (s: number) => Math.round(s * 1000) / 1000;

const insufficient = (needed: number, available: number) =>
  new AppError('insufficient_credits', `Not enough credits: this voiceover needs ${needed} credits and ${available} are available`);

export function createVoiceoverService(
  { db, storage, config, log }: Pick<Deps, 'db' | 'storage' | 'config' | 'log'>,
  voices: Pick<VoiceService, 'require'>,
  speech: SpeechEngine,
) {
  const limit = pLimit(config.speechConcurrency);

  async function present(outcome: RecordedOutcome): Promise<RecordedOutcome> {
    if (outcome.status !== 201) return outcome;
    const stored = outcome.body as StoredVoiceover;
    const row = await findVoiceoverById(db, stored.id);
    if (!row) throw new Error(`voiceover ${stored.id} is recorded in a stored response but missing`);
    return { ...outcome, body: { ...stored, audio_url: await storage.signedUrl(row.audio_key) } satisfies Voiceover };
  }

  /** Runs the engine, bounded in time and in how many run at once; its failure is the upstream's 502. */
  async function runEngine(work: (signal: AbortSignal) => Promise<SpeechAudio>): Promise<SpeechAudio> {
    return limit(async () => {
      try {
        return await work(AbortSignal.timeout(config.speechTimeoutSeconds * 1000));
      } catch (e) {
        log.warn({ err: e }, 'voiceover engine failed');
        const reason = e instanceof EngineError ? e.message : 'the speech engine failed';
        throw new AppError('external_service_error', `The voice engine failed: ${reason}; nothing was charged`);
      }
    });
  }

  /**
   * The audio is made before the transaction (a voiceover is synchronous and can take seconds).
   * Its credits are held first, under the team's row lock, so concurrent voiceovers cannot all
   * start paid speech work on one balance; the debit, the row, the stored response and the end of
   * the hold then commit together. The hold is not a charge: a failure releases it, and one whose
   * process died expires. An Idempotency-Key's retry holds under the same id (found again, not
   * counted twice). Audio that ends up in no row (a 402, a replay that won the race) is deleted.
   */
  async function record(
    p: Principal,
    idem: IdempotencyRequest | undefined,
    body: unknown,
    credits: number,
    make: () => Promise<SpeechAudio>,
    row: Omit<Insertable<VoiceoversTable>, 'id' | 'team_id' | 'api_key_id' | 'duration_seconds' | 'audio_key' | 'credits'>,
  ): Promise<RecordedOutcome> {
    const scope = idem ? { teamId: p.teamId, ...idem } : undefined;
    const hash = requestHash(body);
    const holdId = idem ? `key:${createHash('sha256').update([p.teamId, idem.method, idem.path, idem.key].join('\n')).digest('hex')}` : `once:${randomUUID()}`;
    const held = await db.transaction().execute(async (trx) => {
      const team = (await lockTeam(trx, p.teamId))!;
      const available = team.credits_limit - team.credits_used - (await heldCredits(trx, p.teamId, holdId));
      if (available < credits) return { ok: false as const, available: Math.max(0, available) };
      await placeHold(trx, { id: holdId, team_id: p.teamId, credits, expires_at: new Date(Date.now() + (config.speechTimeoutSeconds + HOLD_MARGIN_SECONDS) * 1000) });
      return { ok: true as const };
    });
    if (!held.ok) {
      // Refused before any engine work; stored like every 402 (DESIGN decision 2).
      return present(await runIdempotent(db, scope, hash, async () => { throw insufficient(credits, held.available); }));
    }
    const release = () => releaseHold(db, holdId).catch((err: unknown) => log.warn({ err, hold: holdId }, 'a voiceover credit hold could not be released; it expires'));
    let audio: SpeechAudio;
    try {
      audio = await make();
    } catch (e) {
      await release();
      throw e;
    }
    const id = randomUUID();
    const audioKey = `voiceovers/${p.teamId}/${id}.mp3`;
    let outcome: RecordedOutcome;
    try {
      await storage.put(audioKey, audio.bytes, audio.mime);
      outcome = await runIdempotent(db, scope, hash, async (trx) => {
        const debit = await debitCredits(trx, p.teamId, credits);
        if (!debit.ok) throw insufficient(credits, debit.available);
        const duration = roundSeconds(audio.durationSeconds);
        await insertVoiceover(trx, { ...row, id, team_id: p.teamId, api_key_id: p.keyId, duration_seconds: duration, audio_key: audioKey, audio_bytes: audio.bytes.length, credits });
        await appendLedger(trx, { team_id: p.teamId, kind: 'debit', amount: credits, subject_type: 'voiceover', subject_id: id });
        await releaseHold(trx, holdId);
        return { status: 201, body: { id, status: 'completed', duration } satisfies StoredVoiceover };
      });
    } catch (e) {
      await storage.delete(audioKey).catch(() => {});
      await release();
      throw e;
    }
    if (outcome.replayed || outcome.status !== 201) {
      await storage.delete(audioKey).catch(() => {});
      await release();
    }
    return present(outcome);
  }

  async function replayOf(p: Principal, idem: IdempotencyRequest | undefined, body: unknown): Promise<RecordedOutcome | undefined> {
    if (!idem) return undefined;
    const stored = await storedOutcome(db, { teamId: p.teamId, ...idem }, requestHash(body));
    return stored && present(stored);
  }

  /**
   * An upload of audio may be as large as a video: a source is held to what a download is, by its
   * stored size, before a byte of it is read.
   */
  async function readSourceUpload(teamId: string, url: string): Promise<Buffer> {
    const key = await uploadKeyOf(db, teamId, url);
    const stored = key && (await storage.openStream(key));
    if (!stored) throw new AppError('validation_error', `audio_url: upload ${uploadIdOf(url)} is no longer stored`);
    if (stored.size > MAX_SOURCE_AUDIO_BYTES) {
      stored.stream.destroy();
      throw new AppError('validation_error', `audio_url: the file is larger than ${MAX_SOURCE_AUDIO_BYTES / 1024 / 1024} MB`);
    }
    return buffer(stored.stream);
  }

  async function fetchSource(url: string, teamId: string | undefined): Promise<{ bytes: Buffer; seconds: number }> {
    let bytes: Buffer;
    try {
      if (uploadIdOf(url)) {
        if (!teamId) throw new AppError('validation_error', 'audio_url: an upload reference is not taken here');
        await checkUploadUses(db, teamId, { audio_url: url });
        bytes = await readSourceUpload(teamId, url);
      } else ({ bytes } = await download(url, { maxBytes: MAX_SOURCE_AUDIO_BYTES, allowPrivate: config.allowPrivateNetworkUrls, timeoutMs: SOURCE_DOWNLOAD_TIMEOUT_MS }));
    } catch (e) {
      if (e instanceof AppError) throw e;
      throw downloadErrorToAppError('audio_url', e);
    }
    try {
      return { bytes, seconds: await audioDuration(bytes, { signal: AbortSignal.timeout(SOURCE_DOWNLOAD_TIMEOUT_MS) }) };
    } catch (e) {
      if (e instanceof EngineError && !e.transient) throw new AppError('validation_error', 'audio_url: the file is not audio that can be read');
      throw new AppError('external_service_error', 'The voice engine failed: the source audio could not be measured; nothing was charged');
    }
  }

  async function pricedTextToSpeech(input: z.output<typeof textToSpeechInput>) {
    return { voice: await voices.require(input.voice_id), credits: TEXT_TO_SPEECH_CREDITS };
  }

  /** Priced by the source's measured length, so the source is fetched and measured first. */
  async function pricedSpeechToSpeech(input: z.output<typeof speechToSpeechInput>, teamId: string | undefined) {
    const voice: CatalogueVoice = await voices.require(input.voice_id);
    const source = await fetchSource(input.audio_url, teamId);
    const credits = speechToSpeechCredits(withinFraming(source.seconds));
    if (credits === null) {
      // To the millisecond, 120.0004 s would read "lasts 120 s": say "more than" instead.
      const shown = roundSeconds(source.seconds) > SPEECH_TO_SPEECH_MAX_SECONDS ? `${roundSeconds(source.seconds)} s` : `more than ${SPEECH_TO_SPEECH_MAX_SECONDS} s`;
      throw new AppError('validation_error', `audio_url: the audio lasts ${shown}; speech-to-speech takes at most ${SPEECH_TO_SPEECH_MAX_SECONDS} s`);
    }
    return { voice, source, credits };
  }

  return {
    // Batch reads for GraphQL relations: one query per batch, only the caller's team's rows.
    findByIds: (p: Principal, ids: readonly string[]): Promise<VoiceoverRow[]> => findTeamVoiceoversByIds(db, p.teamId, ids),

    async textToSpeech(p: Principal, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      const input = parseInput(textToSpeechInput, body ?? undefined);
      const replay = await replayOf(p, idem, body);
      if (replay) return replay;
      const { voice, credits } = await pricedTextToSpeech(input);
      return record(
        p,
        idem,
        body,
        credits,
        () => runEngine((signal) => speech.textToSpeech({ text: input.text, voice, ...(input.model ? { model: input.model } : {}), ...(input.voice_settings ? { settings: input.voice_settings } : {}) }, signal)),
        {
          kind: 'text-to-speech',
          voice_id: voice.id,
          text: input.text,
          model: input.model ?? null,
          voice_settings: input.voice_settings ? JSON.stringify(input.voice_settings) : null,
        },
      );
    },

    /**
     * Priced by the source's measured length (whole seconds, rounded down, per the spec's brackets);
     * an explicit `duration` is only checked to be in range: the audio itself decides.
     */
    async speechToSpeech(p: Principal, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      const input = parseInput(speechToSpeechInput, body ?? undefined);
      const replay = await replayOf(p, idem, body);
      if (replay) return replay;
      const { voice, source, credits } = await pricedSpeechToSpeech(input, p.teamId);
      return record(
        p,
        idem,
        body,
        credits,
        () => runEngine((signal) => speech.speechToSpeech({ input: source.bytes, voice, ...(input.voice_settings ? { settings: input.voice_settings } : {}) }, signal)),
        {
          kind: 'speech-to-speech',
          voice_id: voice.id,
          source_url: input.audio_url,
          source_duration_seconds: roundSeconds(source.seconds),
          voice_settings: input.voice_settings ? JSON.stringify(input.voice_settings) : null,
        },
      );
    },

    /** What the create of this body would charge: the same validation and lookups (the source measured), nothing written. */
    async price(kind: 'text-to-speech' | 'speech-to-speech', body: unknown, teamId?: string): Promise<number> {
      if (kind === 'text-to-speech') return (await pricedTextToSpeech(parseInput(textToSpeechInput, body ?? undefined))).credits;
      return (await pricedSpeechToSpeech(parseInput(speechToSpeechInput, body ?? undefined), teamId)).credits;
    },

    /** The team's own voiceover (talking-avatar's voiceover_id, GraphQL); another team's is 404. */
    async get(p: Principal, id: unknown): Promise<Voiceover> {
      const row = await findTeamVoiceover(db, p.teamId, requireUuid(id));
      if (!row) throw new AppError('not_found', 'Voiceover not found');
      return voiceoverView(storage, row);
    },
  };
}
export type VoiceoverService = ReturnType<typeof createVoiceoverService>;
