import type { Db } from '../../db/pool.ts';
import type { GenerationRow } from '../../db/types.ts';
import { finishGeneration } from '../../repositories/generations.ts';
import { deliverWebhookJob } from '../../jobs/deliver-webhook.ts';
import { queueJob } from '../../jobs/define.ts';
import { findActiveWebhook } from '../../repositories/api-keys.ts';
import { notifyGenerationChanged } from '../../repositories/notifications.ts';
import { refundCredits } from '../../repositories/credits.ts';
import { appendLedger } from '../../repositories/ledger.ts';
import type { Deps } from '../deps.ts';

/**
 * The end of a generation, in one transaction each: the status change, the refund of a failure,
 * the webhook job and the change notice commit together; a generation ends at most once.
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

  return {
    /**
     * `within` runs in the same transaction once the generation has ended (an upstream attempt's
     * end, say); `engine` names what made it, for the metrics ('none' when nothing did: a cancel, a timeout).
     */
    async complete(id: string, resultKeys: string[], resultMeta: Record<string, unknown>, { within, engine, outputBytes }: EndOptions = {}): Promise<GenerationRow | undefined> {
      const ended = await db.transaction().execute(async (trx) => {
        // The results' size is written with them: the team's storage counter moves in this transaction.
        const row = await finishGeneration(trx, id, { status: 'completed', result_keys: resultKeys, result_meta: resultMeta, output_bytes: outputBytes ?? 0 });
        if (row) await afterEnd(trx, row);
        if (row) await within?.(trx);
        return row;
      });
      if (ended) count(ended, engine);
      return ended;
    },

    async fail(id: string, error: string, { within, engine }: EndOptions = {}): Promise<GenerationRow | undefined> {
      const ended = await db.transaction().execute(async (trx) => {
        const row = await finishGeneration(trx, id, { status: 'failed', error });
        // The attempt ends even when the generation had already ended (the sweeper came first).
        await within?.(trx);
        if (!row) return undefined;
        await refundCredits(trx, row.team_id, row.credits);
        await appendLedger(trx, { team_id: row.team_id, kind: 'refund', amount: -row.credits, subject_type: 'generation', subject_id: row.id });
        await afterEnd(trx, row);
        return row;
      });
      if (ended) count(ended, engine);
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
