// A bench-only PROTOTYPE of the proposed create shape (bench/RESULTS.md, "Proposal"), so that its
// gain can be measured end to end through the real HTTPS stack without touching src/. It replaces
// `app.services.generationCreator` in a second, bench-local server. Requests carrying an
// Idempotency-Key keep today's path here (the bench sends none).
//
// The shape: ONE statement in autocommit instead of BEGIN + 4 statements + COMMIT, and the debit
// runs LAST inside it, so the team row is locked only from the debit to the commit (no network
// round trip, no Node event-loop turn in between). Optionally (createPreparingPool) the statements
// go as named, prepared statements: parsed and planned once per connection.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import type { Db } from '../src/db/pool.ts';
import { AppError } from '../src/domain/errors.ts';
import type { GenerationOperation } from '../src/domain/generation-types.ts';
import { parseInput } from '../src/domain/validate.ts';
import type { Deps, Principal } from '../src/services/context.ts';
import { runGenerationJob } from '../src/jobs/run-generation.ts';
import { createGenerationCreator } from '../src/services/generations/create.ts';
import { OPERATIONS } from '../src/services/generations/operations.ts';
import type { IdempotencyRequest, RecordedOutcome } from '../src/services/idempotency.ts';

const CHECK_VIOLATION = '23514';

export interface NewGeneration {
  teamId: string;
  apiKeyId: string;
  operation: string;
  type: string;
  kind: string;
  params: Record<string, unknown>;
  credits: number;
  sourceGenerationId: string | null;
  deadlineAt: Date;
  productIds: string[];
  avatarIds: string[];
  maxAttempts: number;
}

/**
 * Debit + generation + ledger line + links + job in one statement. `fits` reads the balance
 * without a lock; the rows are written only if the credits fit; the debit is a data-modifying CTE
 * that the main query does not read, so PostgreSQL runs it after everything else, and the
 * `credits_within_limit` CHECK refuses it (23514, the whole statement undone) if concurrent
 * creates spent the credits since `fits` was read.
 */
export async function insertGenerationDebited(
  db: Db,
  g: NewGeneration,
): Promise<{ id: string; available: number } | { id: null; available: number }> {
  const { rows } = await sql<{ available: number; id: string | null }>`
    with fits as (
      select credits_limit - credits_used as available from teams where id = ${g.teamId}::uuid
    ), generation as (
      insert into generations (team_id, api_key_id, operation, type, kind, params, credits, source_generation_id, deadline_at)
      select ${g.teamId}::uuid, ${g.apiKeyId}::uuid, ${g.operation}, ${g.type}, ${g.kind}, ${JSON.stringify(g.params)}::jsonb,
             ${g.credits}::int, ${g.sourceGenerationId}::uuid, ${g.deadlineAt}::timestamptz
      from fits where fits.available >= ${g.credits}::int
      returning id
    ), ledger as (
      insert into credit_ledger (team_id, kind, amount, subject_type, subject_id)
      select ${g.teamId}::uuid, 'debit', ${g.credits}::int, 'generation', generation.id from generation
    ), products as (
      insert into generation_products (generation_id, product_id)
      select generation.id, p from generation, unnest(${g.productIds}::uuid[]) as p
    ), avatars as (
      insert into generation_avatars (generation_id, avatar_id)
      select generation.id, a from generation, unnest(${g.avatarIds}::uuid[]) as a
    ), debit as (
      update teams set credits_used = credits_used + ${g.credits}::int
      where id = ${g.teamId}::uuid and exists (select from generation)
    )
    select fits.available, queued.id
    from fits
    left join (
      select generation.id
      from generation
      cross join lateral graphile_worker.add_job(
        identifier => ${runGenerationJob.name}::text,
        payload => json_build_object('generation_id', generation.id),
        max_attempts => ${g.maxAttempts}::int,
        job_key => 'generation:' || generation.id
      ) as job
    ) as queued on true`.execute(db);
  const row = rows[0];
  if (!row) throw new AppError('not_found', 'Team not found');
  return row.id ? { id: row.id, available: row.available } : { id: null, available: Math.max(0, row.available) };
}

export function createOneStatementCreator(deps: Pick<Deps, 'db' | 'config'>) {
  const { db, config } = deps;
  // The bench routes everything to the local engine: nothing is refused for a provider.
  const current = createGenerationCreator({ ...deps, engines: { refusal: () => undefined } });
  return {
    async create(p: Principal, operation: GenerationOperation, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      if (idem) return current.create(p, operation, body, idem);
      const spec = OPERATIONS[operation];
      const params = parseInput(spec.schema, body ?? undefined);
      // Read-only checks of the ids in the request (none for a plain text-to-image).
      const r = await spec.resolve(db, p.teamId, params);
      const input: NewGeneration = {
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
        maxAttempts: config.generationMaxAttempts,
      };
      const insufficient = (available: number) =>
        new AppError('insufficient_credits', `Not enough credits: this generation needs ${r.credits} credits and ${available} are available`);
      for (let attempt = 1; ; attempt++) {
        let out: Awaited<ReturnType<typeof insertGenerationDebited>>;
        try {
          out = await insertGenerationDebited(db, input);
        } catch (e) {
          const err = e as { code?: string; constraint?: string };
          if (err.code !== CHECK_VIOLATION || err.constraint !== 'credits_within_limit') throw e;
          // Lost a race for the last credits: nothing was written. The next attempt's `fits` sees
          // the new balance (and answers 402 the usual way); after three, answer 402 from a fresh read.
          if (attempt < 3) continue;
          const row = await db
            .selectFrom('teams')
            .select(sql<number>`credits_limit - credits_used`.as('available'))
            .where('id', '=', p.teamId)
            .executeTakeFirst();
          throw insufficient(Math.max(0, row?.available ?? 0));
        }
        if (!out.id) throw insufficient(out.available);
        return { status: 202, body: { generation_id: out.id, type: r.type, status: 'processing' }, replayed: false };
      }
    },
  };
}

/**
 * A pg.Client that sends every statement with parameters as a NAMED statement (the name a hash of
 * its text): PostgreSQL parses and plans it once per connection and, after five runs, keeps a
 * generic plan. The bench gives it a pool of its own that serves only the key lookup and the
 * create statement; in src it would be kept to an allow-list of hot statements.
 */
export class PreparingClient extends pg.Client {
  override query(...args: any[]): any {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values) && values.length > 0 && typeof args[2] !== 'function') {
      const name = `h${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
      return super.query({ name, text, values });
    }
    return (super.query as (...a: any[]) => any)(...args);
  }
}

export function createPreparingPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, Client: PreparingClient });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}
