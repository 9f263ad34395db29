// The create path as it was before issue 14, kept ONLY as the bench's "before" reference (the
// issue measures the new path against it in the same run): BEGIN, the debit first (the team row
// locked from here), the generation, the ledger line, the links, the job, COMMIT: 7 round trips,
// every statement unnamed. Requests with an Idempotency-Key take today's path (the bench sends none).
import type { Db } from '../src/db/pool.ts';
import { AppError } from '../src/domain/errors.ts';
import type { GenerationOperation } from '../src/domain/generation-types.ts';
import { parseInput } from '../src/domain/validate.ts';
import { queueJob } from '../src/jobs/define.ts';
import { runGenerationJob } from '../src/jobs/run-generation.ts';
import { debitCredits } from '../src/repositories/credits.ts';
import { appendLedger } from '../src/repositories/ledger.ts';
import type { Deps } from '../src/services/deps.ts';
import type { Principal } from '../src/services/principal.ts';
import { OPERATIONS } from '../src/services/generations/operations.ts';
import type { IdempotencyRequest, RecordedOutcome } from '../src/services/idempotency.ts';

export function createLegacyCreator({ db, config }: { db: Db; config: Deps['config'] }) {
  return {
    async create(p: Principal, operation: GenerationOperation, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      if (idem) throw new Error('the legacy bench path takes no Idempotency-Key');
      const spec = OPERATIONS[operation];
      const params = parseInput(spec.schema, body ?? undefined);
      const outcome = await db.transaction().execute(async (trx) => {
        const r = await spec.resolve(trx, p.teamId, params);
        const debit = await debitCredits(trx, p.teamId, r.credits);
        if (!debit.ok) throw new AppError('insufficient_credits', `Not enough credits: this generation needs ${r.credits} credits and ${debit.available} are available`);
        const g = await trx.insertInto('generations').values({
          team_id: p.teamId,
          api_key_id: p.keyId,
          operation,
          type: r.type,
          kind: spec.kind,
          params: JSON.stringify(r.params),
          credits: r.credits,
          error: null,
          source_generation_id: r.sourceGenerationId ?? null,
          completed_at: null,
          deadline_at: new Date(Date.now() + config.generationTimeoutSeconds * 1000),
        }).returning(['id', 'created_at']).executeTakeFirstOrThrow();
        await appendLedger(trx, { team_id: p.teamId, kind: 'debit', amount: r.credits, subject_type: 'generation', subject_id: g.id });
        if (r.productIds.length) await trx.insertInto('generation_products').values(r.productIds.map((product_id) => ({ generation_id: g.id, product_id }))).execute();
        if (r.avatarIds.length) await trx.insertInto('generation_avatars').values(r.avatarIds.map((avatar_id) => ({ generation_id: g.id, avatar_id }))).execute();
        await queueJob(trx, runGenerationJob, { generation_id: g.id }, { config });
        return { status: 202, body: { generation_id: g.id, type: r.type, status: 'processing' } };
      });
      return { ...outcome, replayed: false };
    },
  };
}
