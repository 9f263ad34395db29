import type { Db } from '../../db/pool.ts';
import type { GenerationRow } from '../../db/types.ts';
import { finishGeneration, lockProcessingGeneration } from '../../repositories/generations.ts';
import { deliverWebhookJob } from '../../jobs/deliver-webhook.ts';
import { deleteStoredFilesJob } from '../../jobs/delete-stored-files.ts';
import { queueJob } from '../../jobs/define.ts';
import { listKeptOutputs, takeKeptOutputs, type KeptOutput } from '../../repositories/kept-outputs.ts';
import { unmadeShare } from '../../domain/unmade-share.ts';
import { findActiveWebhook } from '../../repositories/api-keys.ts';
import { notifyGenerationChanged } from '../../repositories/notifications.ts';
import { refundCredits } from '../../repositories/credits.ts';
import { appendLedger } from '../../repositories/ledger.ts';
import type { Deps } from '../deps.ts';

/**
 * The end of a generation, in one transaction each: the status change, the refund of a failure,
 * the webhook job and the change notice commit together; a generation ends at most once. Outputs
 * kept while it made the rest (kept-outputs.ts) become its first results, or go with its failure.
 */
export function createGenerationLifecycle({ db, metrics }: Pick<Deps, 'db' | 'metrics'>) {
  async function afterEnd(trx: typeof db, row: GenerationRow): Promise<void> {
    const key = row.api_key_id ? await findActiveWebhook(trx, row.api_key_id) : undefined;
    if (key?.webhook_url) {
      // One attempt, by the spec: a receiver that is down misses the event.
      await queueJob(trx, deliverWebhookJob, { generation_id: row.id });
    }
    await notifyGenerationChanged(trx, row);
  }

  // Counted once the transaction committed: a rolled-back end ended nothing.
  function count(row: GenerationRow, engine = 'none'): void {
    if (!metrics || !row.completed_at) return;
    const model = typeof row.params.model === 'string' ? row.params.model : 'none';
    metrics.generations.ended.inc({ type: row.type, model, engine, status: row.status });
    metrics.generations.duration.observe({ type: row.type, engine, status: row.status }, (row.completed_at.getTime() - row.created_at.getTime()) / 1000);
    if (row.status === 'failed') metrics.credits.refunded.inc(row.credits);
  }

  async function failIn(trx: typeof db, id: string, error: string, within: EndOptions['within']): Promise<GenerationRow | undefined> {
    const row = await finishGeneration(trx, id, { status: 'failed', error });
    // The attempt ends even when the generation had already ended (the sweeper came first).
    await within?.(trx);
    if (!row) return undefined;
    await refundCredits(trx, row.team_id, row.credits);
    await appendLedger(trx, { team_id: row.team_id, kind: 'refund', amount: -row.credits, subject_type: 'generation', subject_id: row.id });
    // Outputs it kept while making the rest go with it: their rows now, their files by a job queued here.
    const kept = await takeKeptOutputs(trx, row.id);
    if (kept.length) await queueJob(trx, deleteStoredFilesJob, { keys: kept.map((k) => k.key) });
    await afterEnd(trx, row);
    return row;
  }

  return {
    /**
     * `within` runs in the same transaction once the generation has ended (an upstream attempt's
     * end, say); `engine` names what made it, for the metrics ('none' when nothing did: a cancel, a
     * timeout). `kept`: the outputs kept before these (kept-outputs.ts), listed first.
     */
    async complete(id: string, resultKeys: string[], resultMeta: Record<string, unknown>, { within, engine, outputBytes, kept }: EndOptions & { kept?: readonly KeptOutput[] } = {}): Promise<GenerationRow | undefined> {
      const ended = await db.transaction().execute(async (trx) => {
        const keys = [...(kept ?? []).map((k) => k.key), ...resultKeys];
        const bytes = (outputBytes ?? 0) + (kept ?? []).reduce((n, k) => n + k.bytes, 0);
        // The results' size is written with them: the team's storage counter moves in this transaction.
        const row = await finishGeneration(trx, id, { status: 'completed', result_keys: keys, result_meta: resultMeta, output_bytes: bytes });
        if (row && kept?.length) await takeKeptOutputs(trx, id);
        if (row) await afterEnd(trx, row);
        if (row) await within?.(trx);
        return row;
      });
      if (ended) count(ended, engine);
      return ended;
    },

    async fail(id: string, error: string, { within, engine }: EndOptions = {}): Promise<GenerationRow | undefined> {
      const ended = await db.transaction().execute((trx) => failIn(trx, id, error, within));
      if (ended) count(ended, engine);
      return ended;
    },

    /**
     * Ends a generation that cannot make the rest of its outputs (the call that would make them
     * failed for good, or its outcome is unknown, or its deadline passed). When it kept some and its
     * price is per output, it completes with those, and the share of the outputs not made is
     * refunded exactly (a refund line of its own; `credits` becomes what it cost): a user would rather
     * have the images made, paid for, than lose them. Otherwise it fails and is refunded, as `fail`.
     */
    async endUnfinished(id: string, error: string, { within, engine }: EndOptions = {}): Promise<GenerationRow | undefined> {
      let refunded = 0;
      const ended = await db.transaction().execute(async (trx) => {
        // Locked first: no output is kept for it meanwhile (recordKeptOutput waits, then finds it ended).
        const g = await lockProcessingGeneration(trx, id);
        const kept = g ? await listKeptOutputs(trx, id) : [];
        const share = g && kept.length ? unmadeShare(g, kept.length) : undefined;
        if (!g || share === undefined) return failIn(trx, id, error, within);
        const row = await finishGeneration(trx, id, {
          status: 'completed',
          result_keys: kept.map((k) => k.key),
          result_meta: { quantity_made: kept.length },
          output_bytes: kept.reduce((n, k) => n + k.bytes, 0),
          credits: g.credits - share,
        });
        await within?.(trx);
        if (!row) return undefined;
        await takeKeptOutputs(trx, id);
        if (share > 0) {
          const asked = Number(g.params.quantity);
          await refundCredits(trx, g.team_id, share);
          const note = `${kept.length} of ${asked} images made; the ${asked - kept.length} not made are refunded`;
          await appendLedger(trx, { team_id: g.team_id, kind: 'refund', amount: -share, subject_type: 'generation', subject_id: g.id, note });
          refunded = share;
        }
        await afterEnd(trx, row);
        return row;
      });
      if (ended) count(ended, engine);
      if (ended?.status === 'completed' && refunded) metrics?.credits.refunded.inc(refunded);
      return ended;
    },
  };
}

interface EndOptions {
  within?: (trx: Db) => Promise<unknown>;
  engine?: string;
  /** The stored results' bytes (storage usage). */
  outputBytes?: number;
}
export type GenerationLifecycle = ReturnType<typeof createGenerationLifecycle>;
