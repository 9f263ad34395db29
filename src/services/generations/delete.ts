import type { Transaction } from 'kysely';
import { z } from 'zod';
import type { EngineRegistry } from '../../adapters/engines/registry.ts';
import { isUpstreamEngine } from '../../adapters/engines/engine-contract.ts';
import type { Database } from '../../db/types.ts';
import { AppError } from '../../domain/errors.ts';
import { GENERATION_STATUSES } from '../../domain/generation-types.ts';
import { instant, uuid } from '../../domain/inputs.ts';
import { parseInput } from '../../domain/validate.ts';
import { queueJob } from '../../jobs/define.ts';
import { deleteStoredFilesJob } from '../../jobs/delete-stored-files.ts';
import { deleteGenerationRows, liveUpstreamJobsOf, lockTeamGenerations, matchingGenerations, sourcesOfProcessing, type DeletableGeneration } from '../../repositories/generation-deletes.ts';
import type { Deps } from '../deps.ts';
import type { Principal } from '../principal.ts';
import { requireUuid } from '../ids.ts';
import { requestHash, runIdempotent, type IdempotencyRequest, type RecordedOutcome } from '../idempotency.ts';
import { inputCopyKeys } from './input-keys.ts';
import { actorOf, recordAudit } from '../audit.ts';

/** The most ids one bulk delete names. */
export const MAX_DELETE_IDS = 100;
/** A bulk delete by filter deletes at most this many per call (`has_more` says when more match). */
export const MAX_DELETE_BY_FILTER = 1000;
/** Generations deleted per transaction by a filter (each transaction queues one files job). */
const BATCH = 100;
/** The files job runs this long after the commit: the request has deleted the files by then, unless something failed. */
const FILES_JOB_DELAY_MS = 5 * 60_000;
const FILE_DELETES_AT_ONCE = 8;
const PROVIDER_CANCEL_TIMEOUT_MS = 10_000;

export const generationDeleteFilter = z.object({
  type: z.enum(['talking-avatar', 'ai-video', 'image'], { message: 'must be talking-avatar, ai-video or image' }).optional(),
  status: z.enum(GENERATION_STATUSES, { message: 'must be processing, completed or failed' }).optional(),
  created_before: instant.optional(),
});

export const generationsDelete = z
  .object({
    ids: z.array(uuid).min(1, 'must name at least one generation').max(MAX_DELETE_IDS, `must name at most ${MAX_DELETE_IDS} generations`).optional(),
    filter: generationDeleteFilter.optional(),
  })
  .refine((v) => (v.ids === undefined) !== (v.filter === undefined), { message: 'give either ids or filter, not both', path: ['ids'] });

export interface GenerationsDeleted {
  /** Deleted by this call. */
  deleted: number;
  /** Matched or named but not deletable yet: still processing, or the source of a video edit still processing. */
  skipped: number;
  /** Named ids that are not the team's generations (missing, another team's, already deleted). */
  not_found: number;
  /** A filter matched more than one call deletes: call again. */
  has_more: boolean;
}

/**
 * Deleting generations that have ended. In one transaction: the rows (and, by their foreign keys,
 * their product and avatar links, upstream jobs and webhook deliveries; campaign rows keep the id
 * as deleted) and a delayed job naming their files. After the commit the files are deleted at
 * once; one that fails is logged and left to that job, which retries. The ledger is never touched.
 */
export function createGenerationDeleter({ db, storage, log, engines }: Pick<Deps, 'db' | 'storage' | 'log'> & { engines: Pick<EngineRegistry, 'byName'> }) {
  /** What is left to do once the rows are gone: files to delete, provider jobs to stop. */
  interface Leftovers {
    keys: string[];
    providerJobs: { id: string; provider: string; handle: Record<string, unknown> }[];
  }
  const nothingLeft = (): Leftovers => ({ keys: [], providerJobs: [] });

  /** Deletes the locked rows that have ended; answers what to do once the transaction commits. */
  async function deleteLocked(trx: Transaction<Database>, rows: readonly DeletableGeneration[]): Promise<Leftovers> {
    if (!rows.length) return nothingLeft();
    const ids = rows.map((r) => r.id);
    // An ended generation's provider job is normally stopped by its next look (poll_upstream),
    // which finds nothing once the job's row is deleted: the delete stops it instead.
    const providerJobs = await liveUpstreamJobsOf(trx, ids);
    await deleteGenerationRows(trx, ids);
    const keys = rows.flatMap((r) => [...r.result_keys, ...inputCopyKeys(r.id)]);
    await queueJob(trx, deleteStoredFilesJob, { keys }, { runAt: new Date(Date.now() + FILES_JOB_DELAY_MS) });
    return { keys, providerJobs };
  }

  /** After the commit: the files deleted, the provider jobs told to stop (each failure logged, never thrown). */
  async function cleanUp(left: Leftovers): Promise<void> {
    await Promise.all(
      left.providerJobs.map(async (j) => {
        const engine = engines.byName(j.provider);
        if (!engine || !isUpstreamEngine(engine) || !engine.cancel) return;
        await engine.cancel(j.handle, AbortSignal.timeout(PROVIDER_CANCEL_TIMEOUT_MS)).catch((err: unknown) =>
          log.warn({ err, upstream_job_id: j.id, provider: j.provider }, 'the provider job of a deleted generation could not be cancelled'),
        );
      }),
    );
    await deleteKeys(left.keys);
  }

  /** Deletes every key it can; answers the keys it could not (each logged). */
  async function deleteKeys(keys: readonly string[]): Promise<string[]> {
    const failed: string[] = [];
    let next = 0;
    const lane = async () => {
      while (next < keys.length) {
        const key = keys[next++]!;
        try {
          await storage.delete(key);
        } catch (err) {
          failed.push(key);
          log.warn({ err, file: key }, 'a file of a deleted generation could not be deleted now; the delete_stored_files job retries it');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(FILE_DELETES_AT_ONCE, keys.length) }, lane));
    return failed;
  }

  /** The team's generations among `ids` that can go: ended, and no processing video edit reads their result. */
  async function deleteIds(p: Principal, ids: readonly string[], audited: boolean): Promise<{ deleted: number; skipped: number; missing: number }> {
    let left = nothingLeft();
    const counts = await db.transaction().execute(async (trx) => {
      const rows = await lockTeamGenerations(trx, p.teamId, ids);
      const sources = new Set(await sourcesOfProcessing(trx, rows.map((r) => r.id)));
      const gone = rows.filter((r) => r.status !== 'processing' && !sources.has(r.id));
      left = await deleteLocked(trx, gone);
      const counts = { deleted: gone.length, skipped: rows.length - gone.length, missing: new Set(ids).size - rows.length };
      if (audited && gone.length) {
        await recordAudit(trx, p.teamId, actorOf(p), 'generations.bulk_deleted', { ids: gone.map((r) => r.id), deleted: counts.deleted, skipped: counts.skipped, not_found: counts.missing });
      }
      return counts;
    });
    await cleanUp(left);
    return counts;
  }

  return {
    /**
     * `DELETE /generations/{id}`: 204, or 404 (missing, another team's), or 409 (still processing).
     * Under an Idempotency-Key a repeat answers the first answer.
     */
    async remove(p: Principal, id: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      const generationId = requireUuid(id);
      let left = nothingLeft();
      const scope = idem ? { teamId: p.teamId, ...idem } : undefined;
      const outcome = await runIdempotent(db, scope, requestHash(undefined), async (trx) => {
        const [row] = await lockTeamGenerations(trx, p.teamId, [generationId]);
        if (!row) throw new AppError('not_found', 'Generation not found');
        if (row.status === 'processing') {
          throw new AppError('conflict', 'Generation is still processing: cancel it first (POST /generations/{id}/cancel), then delete it');
        }
        if ((await sourcesOfProcessing(trx, [row.id])).length) {
          throw new AppError('conflict', 'Generation is the source of a video edit still processing: cancel that edit first, or wait for it to end');
        }
        left = await deleteLocked(trx, [row]);
        return { status: 204, body: undefined };
      });
      await cleanUp(left);
      return outcome;
    },

    /** By ids (at most 100) or by filter (at most 1,000 a call); those that cannot go yet are skipped and counted. */
    async removeMany(p: Principal, input: unknown): Promise<GenerationsDeleted> {
      const q = parseInput(generationsDelete, input);
      if (q.ids) {
        const r = await deleteIds(p, [...new Set(q.ids.map((i) => i.toLowerCase()))], true);
        return { deleted: r.deleted, skipped: r.skipped, not_found: r.missing, has_more: false };
      }
      const f = q.filter!;
      const filter = { type: f.type, status: f.status, createdBefore: f.created_before };
      let deleted = 0;
      let skipped = 0;
      let hasMore = true;
      try {
        // Each batch deletes what it matched, unless another call deleted it or an edit began from it meanwhile.
        for (let round = 0; deleted < MAX_DELETE_BY_FILTER && round < (2 * MAX_DELETE_BY_FILTER) / BATCH; round++) {
          const match = await matchingGenerations(db, p.teamId, filter, Math.min(BATCH, MAX_DELETE_BY_FILTER - deleted));
          skipped = match.skipped;
          if (!match.ids.length) break;
          deleted += (await deleteIds(p, match.ids, false)).deleted;
        }
        hasMore = (await matchingGenerations(db, p.teamId, filter, 1)).ids.length > 0;
      } finally {
        // Batches of their own transactions: one line for the call once they are done, or once
        // one failed, with what was deleted up to then.
        if (deleted) {
          const named = { ...(f.type ? { type: f.type } : {}), ...(f.status ? { status: f.status } : {}), ...(f.created_before ? { created_before: f.created_before.toISOString() } : {}) };
          await recordAudit(db, p.teamId, actorOf(p), 'generations.bulk_deleted', { filter: named, deleted, skipped, has_more: hasMore });
        }
      }
      return { deleted, skipped, not_found: 0, has_more: hasMore };
    },

    /** The files job: throws (to be retried) when any key could not be deleted. */
    async deleteFiles(keys: readonly string[]): Promise<void> {
      const failed = await deleteKeys(keys);
      if (failed.length) throw new Error(`${failed.length} of ${keys.length} stored files could not be deleted`);
    },
  };
}
export type GenerationDeleter = ReturnType<typeof createGenerationDeleter>;
