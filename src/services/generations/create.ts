import { AppError } from '../../domain/errors.ts';
import type { GenerationOperation } from '../../domain/generation-types.ts';
import { parseInput } from '../../domain/validate.ts';
import { debitCredits } from '../../repositories/credits.ts';
import { insertGeneration, linkGeneration } from '../../repositories/generations.ts';
import type { EngineRegistry } from '../../adapters/engines/registry.ts';
import { queueJob } from '../../jobs/define.ts';
import { runGenerationJob } from '../../jobs/run-generation.ts';
import { appendLedger } from '../../repositories/ledger.ts';
import type { Deps, Principal } from '../context.ts';
import { requestHash, runIdempotent, runIdempotentIn, type IdempotencyRequest, type Outcome, type RecordedOutcome } from '../idempotency.ts';
import type { Transaction } from 'kysely';
import type { Database } from '../../db/types.ts';
import { OPERATIONS } from './operations.ts';

export function createGenerationCreator({ db, config, engines }: Pick<Deps, 'db' | 'config'> & { engines: Pick<EngineRegistry, 'refusal'> }) {
  /** Check ids, price, debit, record the generation and its links, queue its job: one piece of a transaction. */
  async function work(trx: Transaction<Database>, p: Principal, operation: GenerationOperation, params: unknown): Promise<Outcome> {
    const spec = OPERATIONS[operation];
    const r = await spec.resolve(trx, p.teamId, params);
    // What the routed provider cannot make is refused here, never accepted and failed later.
    const refusal = engines.refusal(operation, r.params, r.attachedImages);
    if (refusal) throw new AppError('validation_error', refusal);
    const debit = await debitCredits(trx, p.teamId, r.credits);
    if (!debit.ok) {
      throw new AppError(
        'insufficient_credits',
        `Not enough credits: this generation needs ${r.credits} credits and ${debit.available} are available`,
      );
    }
    const g = await insertGeneration(trx, {
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
    });
    await appendLedger(trx, { team_id: p.teamId, kind: 'debit', amount: r.credits, subject_type: 'generation', subject_id: g.id });
    await linkGeneration(trx, g.id, r.productIds, r.avatarIds);
    await queueJob(trx, runGenerationJob, { generation_id: g.id }, { config });
    return { status: 202, body: { generation_id: g.id, type: r.type, status: 'processing' } };
  }

  return {
    /**
     * One transaction: check ids, price, debit, record the generation and its links, queue its
     * job, and store the response under the Idempotency-Key. Bad input fails before any of it.
     */
    async create(p: Principal, operation: GenerationOperation, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      const params = parseInput(OPERATIONS[operation].schema, body ?? undefined);
      const scope = idem ? { teamId: p.teamId, ...idem } : undefined;
      return runIdempotent(db, scope, requestHash(body), (trx) => work(trx, p, operation, params));
    },

    /** The same create inside the caller's transaction (a batch of campaign rows in one commit). */
    async createIn(trx: Transaction<Database>, p: Principal, operation: GenerationOperation, body: unknown, idem: IdempotencyRequest): Promise<RecordedOutcome> {
      const params = parseInput(OPERATIONS[operation].schema, body ?? undefined);
      return runIdempotentIn(trx, { teamId: p.teamId, ...idem }, requestHash(body), (t) => work(t, p, operation, params));
    },
  };
}
export type GenerationCreator = ReturnType<typeof createGenerationCreator>;
