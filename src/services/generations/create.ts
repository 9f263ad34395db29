import { randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import type { GenerationOperation } from '../../domain/generation-types.ts';
import { parseInput } from '../../domain/validate.ts';
import { availableCredits, insertGenerationDebited, insertGenerationsDebited, type DebitedGeneration } from '../../repositories/generations.ts';
import { lockTeam } from '../../repositories/teams.ts';
import type { EngineRegistry } from '../../adapters/engines/registry.ts';
import { GENERATION_JOB_KEY_PREFIX, runGenerationJob } from '../../jobs/run-generation.ts';
import type { Db } from '../../db/pool.ts';
import type { Deps, Principal } from '../context.ts';
import { claimMany, isStoredRefusal, requestHash, runIdempotent, storeMany, type IdempotencyRequest, type Outcome, type RecordedOutcome, type RecordOutcome } from '../idempotency.ts';
import type { Transaction } from 'kysely';
import type { Database } from '../../db/types.ts';
import { OPERATIONS } from './operations.ts';

// The credits check's serialization edge: concurrent creates spent the credits since `fits` read them.
const CHECK_VIOLATION = '23514';
const LOST_RACE_RETRIES = 3;

const insufficientCredits = (needed: number, available: number) =>
  new AppError('insufficient_credits', `Not enough credits: this generation needs ${needed} credits and ${available} are available`);

const accepted = (g: DebitedGeneration): Outcome => ({ status: 202, body: { generation_id: g.id, type: g.type, status: 'processing' } });

export function createGenerationCreator({ db, config, engines }: Pick<Deps, 'db' | 'config'> & { engines: Pick<EngineRegistry, 'refusal'> }) {
  const job = {
    identifier: runGenerationJob.name,
    maxAttempts: config.generationMaxAttempts,
    jobKeyPrefix: GENERATION_JOB_KEY_PREFIX,
  };

  type Resolved = Awaited<ReturnType<typeof resolve>>;

  /** Check ids, price, refuse what the route cannot make: reads only. */
  async function resolve(db: Db, p: Principal, operation: GenerationOperation, params: unknown) {
    const spec = OPERATIONS[operation];
    const r = await spec.resolve(db, p.teamId, params);
    // What the routed provider cannot make is refused here, never accepted and failed later.
    const refusal = engines.refusal(operation, r.params, r.attachedImages);
    if (refusal) throw new AppError('validation_error', refusal);
    return { spec, r };
  }

  /** The row a create writes, its id chosen here so that an outcome naming it can be stored first. */
  function newGeneration(p: Principal, operation: GenerationOperation, { spec, r }: Resolved): DebitedGeneration {
    return {
      id: randomUUID(),
      teamId: p.teamId,
      apiKeyId: p.keyId,
      operation,
      type: r.type,
      kind: spec.kind,
      params: r.params,
      credits: r.credits,
      sourceGenerationId: r.sourceGenerationId ?? null,
      deadlineAt: new Date(Date.now() + config.generationTimeoutSeconds * 1000),
      productIds: r.productIds,
      avatarIds: r.avatarIds,
    };
  }

  /**
   * Debit, generation, ledger line, links and job in one statement. On its own it needs no
   * transaction: the debit goes last and a lost race for the last credits (the CHECK) is tried
   * again. Inside one (an Idempotency-Key, a campaign batch), where the team row stays locked to
   * the COMMIT whatever the order, the debit goes first and cannot fail on the CHECK, so the
   * statement needs no savepoint either; and the response is stored under the key before it, so
   * that the row stays locked only for the statement and the COMMIT.
   */
  async function createDebited(
    db: Db,
    p: Principal,
    operation: GenerationOperation,
    resolved: Resolved,
    inTransaction: false | { record: RecordOutcome },
  ): Promise<Outcome> {
    const g = newGeneration(p, operation, resolved);
    const insufficient = (available: number) => insufficientCredits(g.credits, available);
    const created = accepted(g);
    // Undone with the transaction should the statement refuse: the refusal is stored instead.
    if (inTransaction) await inTransaction.record(created);
    for (let attempt = 1; ; attempt++) {
      let out: { id: string | null; available: number };
      try {
        out = await insertGenerationDebited(db, g, job, inTransaction ? 'first' : 'last');
      } catch (e) {
        const err = e as { code?: string; constraint?: string };
        if (inTransaction || err.code !== CHECK_VIOLATION || err.constraint !== 'credits_within_limit') throw e;
        // Nothing was written. The next attempt reads the new balance (and answers 402 the usual way).
        if (attempt < LOST_RACE_RETRIES) continue;
        throw insufficient(await availableCredits(db, p.teamId));
      }
      if (out.id) return created;
      // With the debit first, a debit committed after the statement's snapshot refused it: read the balance it lost to.
      throw insufficient(out.available >= g.credits ? await availableCredits(db, p.teamId) : out.available);
    }
  }

  return {
    /**
     * Without an Idempotency-Key: reads, then one statement in autocommit. With one: the same
     * statement inside the key's transaction, the response stored under the key in the same commit.
     * Bad input fails before any of it.
     */
    async create(p: Principal, operation: GenerationOperation, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      const params = parseInput(OPERATIONS[operation].schema, body ?? undefined);
      if (!idem) return { ...(await createDebited(db, p, operation, await resolve(db, p, operation, params), false)), replayed: false };
      return runIdempotent(db, { teamId: p.teamId, ...idem }, requestHash(body), async (trx, record) => createDebited(trx, p, operation, await resolve(trx, p, operation, params), { record }));
    },

    /**
     * Many creates of one team inside the caller's transaction (a batch of campaign rows), each
     * under its own Idempotency-Key and answered as its endpoint would answer it, written together:
     * the keys locked and looked up at once, each body checked and priced (reads), the team's row
     * locked once, the creates that fit accepted in order (a later one that does not fit is a 402),
     * then one statement for every accepted generation with one summed debit, one for the stored
     * outcomes. A repeat replays; nothing is charged twice. Faults (a key held too long, a 500)
     * throw and undo the whole batch.
     */
    async createManyIn(trx: Transaction<Database>, p: Principal, items: { operation: GenerationOperation; body: unknown; idem: IdempotencyRequest }[]): Promise<RecordedOutcome[]> {
      const claims = items.map((it) => ({ scope: it.idem, hash: requestHash(it.body) }));
      const replays = await claimMany(trx, p.teamId, claims);
      // Reads only: what each new body makes and costs, or why it is refused.
      const steps = await Promise.all(
        items.map(async (it, i): Promise<RecordedOutcome | AppError | Resolved> => {
          if (replays[i]) return replays[i];
          try {
            return await resolve(trx, p, it.operation, parseInput(OPERATIONS[it.operation].schema, it.body ?? undefined));
          } catch (e) {
            if (e instanceof AppError && e.status < 500) return e;
            throw e;
          }
        }),
      );
      const isNew = (s: (typeof steps)[number]): s is Resolved => !(s instanceof AppError) && 'spec' in s;
      const team = steps.some(isNew) ? await lockTeam(trx, p.teamId) : undefined;
      let available = Math.max(0, (team?.credits_limit ?? 0) - (team?.credits_used ?? 0));
      const generations: DebitedGeneration[] = [];
      const stored: { scope: IdempotencyRequest; hash: Buffer; outcome: Outcome }[] = [];
      const outcomes = steps.map((step, i): RecordedOutcome => {
        let refusal = step instanceof AppError ? step : undefined;
        if (isNew(step)) {
          const g = newGeneration(p, items[i]!.operation, step);
          if (g.credits <= available) {
            available -= g.credits;
            generations.push(g);
            stored.push({ ...claims[i]!, outcome: accepted(g) });
            return { ...accepted(g), replayed: false };
          }
          refusal = insufficientCredits(g.credits, available);
        }
        if (!refusal) return step as RecordedOutcome;
        const outcome = { status: refusal.status, body: refusal.toBody() };
        if (isStoredRefusal(refusal)) stored.push({ ...claims[i]!, outcome });
        return { ...outcome, replayed: false };
      });
      await insertGenerationsDebited(trx, p.teamId, generations, job);
      await storeMany(trx, p.teamId, stored);
      return outcomes;
    },
  };
}
export type GenerationCreator = ReturnType<typeof createGenerationCreator>;
