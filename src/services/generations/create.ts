import { randomUUID } from 'node:crypto';
import { annotate } from '../../observability/tracing.ts';
import { AppError } from '../../domain/errors.ts';
import type { GenerationOperation } from '../../domain/generation-types.ts';
import { parseInput } from '../../domain/validate.ts';
import { availableCredits, insertGenerationDebited, insertGenerationsDebited, type DebitedGeneration } from '../../repositories/generations.ts';
import { lockTeam } from '../../repositories/teams.ts';
import type { EngineRegistry } from '../../adapters/engines/registry.ts';
import { jobSpec } from '../../jobs/define.ts';
import { runGenerationJob } from '../../jobs/run-generation.ts';
import type { Db } from '../../db/pool.ts';
import type { Deps } from '../deps.ts';
import type { Principal } from '../principal.ts';
import {
  claimMany,
  IDEMPOTENCY_WINDOW_HOURS,
  isStoredRefusal,
  keyInUse,
  keyRow,
  requestHash,
  runIdempotent,
  storedOutcome,
  storeMany,
  storeRefusal,
  type IdempotencyRequest,
  type IdempotencyScope,
  type Outcome,
  type RecordedOutcome,
  type RecordOutcome,
} from '../idempotency.ts';
import type { Transaction } from 'kysely';
import type { Database } from '../../db/types.ts';
import { OPERATIONS } from './operations.ts';
import { checkUploadUses } from '../uploads.ts';
import { ensureStorageRoom } from '../storage-usage.ts';

// The credits check's serialization edge: concurrent creates spent the credits since `fits` read them.
const CHECK_VIOLATION = '23514';
const LOST_RACE_RETRIES = 3;

const insufficientCredits = (needed: number, available: number) =>
  new AppError('insufficient_credits', `Not enough credits: this generation needs ${needed} credits and ${available} are available`);

const accepted = (g: DebitedGeneration): Outcome => ({ status: 202, body: { generation_id: g.id, type: g.type, status: 'processing' } });

export function createGenerationCreator({ db, config, engines, metrics }: Pick<Deps, 'db' | 'config' | 'metrics'> & { engines: Pick<EngineRegistry, 'refusal'> }) {
  /** The generation's render job, built by its contract (payload checked, attempts, key, the trace that queued it). */
  const renderJob = (g: DebitedGeneration) => jobSpec(runGenerationJob, { generation_id: g.id }, { config });

  type Resolved = Awaited<ReturnType<typeof resolve>>;

  /** The body checked by its endpoint's schema, then resolved: reads only. */
  const resolveBody = (db: Db, p: Principal, operation: GenerationOperation, body: unknown) =>
    resolve(db, p, operation, parseInput(OPERATIONS[operation].schema, body ?? undefined));

  /** Check ids, price, refuse what the route cannot make: reads only. */
  async function resolve(db: Db, p: Principal, operation: GenerationOperation, params: unknown) {
    const spec = OPERATIONS[operation];
    await checkUploadUses(db, p.teamId, params);
    const r = await spec.resolve(db, p.teamId, params);
    // What the routed provider cannot make is refused here, never accepted and failed later.
    const refusal = engines.refusal(operation, r.params, r.attachedImages);
    if (refusal) throw new AppError('validation_error', refusal);
    await ensureRoom(db, p, r.credits);
    return { spec, r };
  }

  /**
   * The tier's storage quota, before anything is charged or queued. A team that could not pay
   * either gets the spec's 402 (from the debit), which the quota never replaces.
   */
  async function ensureRoom(db: Db, p: Principal, credits: number): Promise<void> {
    try {
      await ensureStorageRoom({ db, config }, p.teamId, { generation: true });
    } catch (e) {
      if (e instanceof AppError && credits > (await availableCredits(db, p.teamId))) return;
      throw e;
    }
  }

  // Counted when written (a caller's transaction rolled back afterwards still counts: rare, and said in docs/operations.md).
  function counted(g: DebitedGeneration): void {
    metrics?.generations.created.inc({ type: g.type, model: typeof g.params.model === 'string' ? g.params.model : 'none' });
    metrics?.credits.debited.inc(g.credits);
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
   * Debit, generation, ledger line, links and job in one statement, in one of three ways:
   * - plain (no key): autocommit, the debit last; a lost race for the last credits (the CHECK) is
   *   tried again.
   * - claiming a key: the same, with the key's lock taken and its answer stored by the statement
   *   itself, so an idempotent create is one round trip too. When the key already has an answer,
   *   nothing is written and that answer is replayed (or a different body under it is a 400).
   * - inside the key's transaction (when the body was refused and a replay had to be looked for
   *   first): the debit first, which waits for the team's row and re-checks the limit, so it never
   *   fails on the CHECK and needs no savepoint; the answer is stored under the key before it, so
   *   the row stays locked only for the statement and the COMMIT.
   * Throws the 402 when the credits do not fit.
   */
  async function createDebited(
    db: Db,
    p: Principal,
    operation: GenerationOperation,
    resolved: Resolved,
    mode: { plain: true } | { record: RecordOutcome } | { scope: IdempotencyScope; hash: Buffer },
  ): Promise<RecordedOutcome> {
    const g = newGeneration(p, operation, resolved);
    const insufficient = (available: number) => insufficientCredits(g.credits, available);
    const created: RecordedOutcome = { ...accepted(g), replayed: false };
    const inTransaction = 'record' in mode;
    const statement = inTransaction ? 'first' : 'scope' in mode ? { claim: { row: keyRow(mode.scope, mode.hash, created), windowHours: IDEMPOTENCY_WINDOW_HOURS } } : 'last';
    // Undone with the transaction should the statement refuse: the refusal is stored instead.
    if (inTransaction) await mode.record(created);
    for (let attempt = 1; ; attempt++) {
      let out: { id: string | null; available: number; claimed: boolean };
      try {
        out = await insertGenerationDebited(db, g, renderJob(g), statement);
      } catch (e) {
        const err = e as { code?: string; constraint?: string };
        if (inTransaction || err.code !== CHECK_VIOLATION || err.constraint !== 'credits_within_limit') throw e;
        // Nothing was written. The next attempt reads the new balance (and answers 402 the usual way).
        if (attempt < LOST_RACE_RETRIES) continue;
        throw insufficient(await availableCredits(db, p.teamId));
      }
      if (out.id) {
        counted(g);
        annotate({ 'adforge.generation_id': g.id });
        return created;
      }
      if ('scope' in mode && !out.claimed && out.available >= g.credits) {
        // The credits fitted but the key already had an answer (or a repeat's just committed).
        const stored = await storedOutcome(db, mode.scope, mode.hash);
        if (stored) return stored;
        if (attempt < LOST_RACE_RETRIES) continue;
        throw keyInUse();
      }
      // With the debit first, a debit committed after the statement's snapshot refused it: read the balance it lost to.
      throw insufficient(out.available >= g.credits ? await availableCredits(db, p.teamId) : out.available);
    }
  }

  return {
    /**
     * Reads, then one statement in autocommit, which with an Idempotency-Key also claims the key
     * and stores the response under it. Bad input fails before any of it.
     */
    async create(p: Principal, operation: GenerationOperation, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      const params = parseInput(OPERATIONS[operation].schema, body ?? undefined);
      if (!idem) return createDebited(db, p, operation, await resolve(db, p, operation, params), { plain: true });
      const scope = { teamId: p.teamId, ...idem };
      const hash = requestHash(body);
      let resolved: Resolved;
      try {
        resolved = await resolve(db, p, operation, params);
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
        // A refused body may still have an answer under its key (a replay wins over a refusal):
        // the key's transaction looks first, then resolves again and stores what it finds.
        return runIdempotent(db, scope, hash, async (trx, record) => createDebited(trx, p, operation, await resolve(trx, p, operation, params), { record }));
      }
      try {
        return await createDebited(db, p, operation, resolved, { scope, hash });
      } catch (e) {
        // The 402 is stored under the key in a transaction of its own, unless a repeat answered it meanwhile.
        if (isStoredRefusal(e)) return storeRefusal(db, scope, hash, e);
        throw e;
      }
    },

    /** What the create of this body would charge: the same validation, lookups and refusals, nothing written. */
    async price(p: Principal, operation: GenerationOperation, body: unknown): Promise<number> {
      return (await resolveBody(db, p, operation, body)).r.credits;
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
            return await resolveBody(trx, p, it.operation, it.body);
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
      await insertGenerationsDebited(trx, p.teamId, generations, generations.map(renderJob));
      generations.forEach(counted);
      await storeMany(trx, p.teamId, stored);
      return outcomes;
    },
  };
}
export type GenerationCreator = ReturnType<typeof createGenerationCreator>;
