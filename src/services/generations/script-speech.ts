import type { GenerationRow, UpstreamJobRow } from '../../db/types.ts';
import { UpstreamError } from '../../adapters/engines/engine-contract.ts';
import { SpeechSentError, type SpeechEngine } from '../../adapters/engines/speech/engine.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import { setGenerationInputBytes } from '../../repositories/storage-usage.ts';
import { endAnsweredUpstreamJob, endUpstreamJob, insertSubmitting } from '../../repositories/upstream-jobs.ts';
import type { Deps } from '../deps.ts';
import { requireVoice } from '../voices.ts';
import { speechCopyKey } from './input-keys.ts';

// Speaking one script: a few thousand characters at most.
const SPEAK_TIMEOUT_MS = 300_000;

/**
 * A talking avatar's script, spoken once by our speech engine and kept with its generation (a
 * retry reuses the copy). A speech engine that bills each request and takes no idempotency key
 * (ElevenLabs) is asked as an attempt of the generation, recorded before it is sent
 * (`upstream_jobs`, provider `speech:<engine>`): an answer lost once sent, the call's or the
 * worker's, is never asked again; the generation fails and is refunded instead of paying twice.
 */
export function createScriptSpeech(deps: Pick<Deps, 'db'> & { storage: Storage; speech: SpeechEngine }) {
  const { db, storage, speech } = deps;
  const provider = `speech:${speech.name}`;
  const unconfirmed = `${speech.name} did not confirm the speech of the script; it was not asked again so that it is never paid twice`;

  async function store(g: GenerationRow, audio: { bytes: Buffer; mime: string }): Promise<void> {
    await storage.put(speechCopyKey(g.id), audio.bytes, audio.mime);
    await setGenerationInputBytes(db, g.id, audio.bytes.length);
  }

  /** Whether the generation's speech copy is stored, read from its first byte alone. */
  async function stored(generationId: string): Promise<boolean> {
    const o = await storage.openStream(speechCopyKey(generationId), { start: 0, end: 0 });
    o?.stream.destroy();
    return o !== null;
  }

  return {
    /** The provider name its attempts are recorded under: never an engine's. */
    provider,
    stored,

    /** Speaks the generation's script into its speech copy. */
    async speak(g: GenerationRow): Promise<void> {
      const p = g.params as Record<string, unknown>;
      const voice = await requireVoice(db, String(p.voice_id));
      const job = { text: String(p.script ?? ''), voice };
      if (!speech.bills) return store(g, await speech.textToSpeech(job, AbortSignal.timeout(SPEAK_TIMEOUT_MS)));
      const attempt = await insertSubmitting(db, g.id, provider);
      let audio;
      try {
        audio = await speech.textToSpeech(job, AbortSignal.timeout(SPEAK_TIMEOUT_MS));
      } catch (e) {
        if (!(e instanceof SpeechSentError)) {
          // Nothing was made: a later attempt of the generation may ask again.
          await endUpstreamJob(db, attempt.id, { state: 'failed', error: (e as Error).message });
          throw e;
        }
        const message = e.answered ? e.message : unconfirmed;
        await endUpstreamJob(db, attempt.id, { state: 'failed', error: message });
        throw new UpstreamError(e.answered ? 'refused' : 'unsent_unknown', message, { cause: e });
      }
      await store(g, audio);
      await endAnsweredUpstreamJob(db, attempt.id, attempt.id);
    },

    /**
     * The speech attempt a stopped worker left live: settled when its copy was stored before the
     * worker stopped (the generation goes on); otherwise its outcome is unknown and the message to
     * fail the generation with is answered.
     */
    async settleInterrupted(live: UpstreamJobRow): Promise<string | undefined> {
      if (await stored(live.generation_id)) {
        await endAnsweredUpstreamJob(db, live.id, live.id);
        return undefined;
      }
      return `the speech of the script asked of ${speech.name} was interrupted and cannot be confirmed; it was not asked again so that it is never paid twice`;
    },
  };
}
export type ScriptSpeech = ReturnType<typeof createScriptSpeech>;
