import { sql, type RawBuilder } from 'kysely';
import { prepareHot, type Db } from '../db/pool.ts';
import type { GenerationRow } from '../db/types.ts';
import type { GenerationStatus, GenerationType } from '../domain/generation-types.ts';
import type { Page } from '../domain/inputs.ts';
import { fetchPage, type PageOf } from './fetch-page.ts';
import { keyLockName, type StoredKey } from './idempotency-keys.ts';
import type { JobSpec } from './jobs.ts';
import { GENERATION_EVENTS_CHANNEL } from '../events/channels.ts';

export function findGeneration(db: Db, teamId: string, id: string): Promise<GenerationRow | undefined> {
  return db.selectFrom('generations').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

export function findGenerationById(db: Db, id: string): Promise<GenerationRow | undefined> {
  return db.selectFrom('generations').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface GenerationFilter {
  type?: 'talking-avatar' | 'ai-video' | 'image' | undefined;
  status?: GenerationStatus | undefined;
}

export function listGenerations(db: Db, teamId: string, filter: GenerationFilter, page: Page): Promise<PageOf<GenerationRow>> {
  let base = db.selectFrom('generations').where('team_id', '=', teamId);
  // `image` is every image generation (decision 9); the other filter values are exact types.
  if (filter.type === 'image') base = base.where('kind', '=', 'image');
  else if (filter.type) base = base.where('type', '=', filter.type as GenerationType);
  if (filter.status) base = base.where('status', '=', filter.status);
  return fetchPage(base, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

/** The generation while it is processing, locked until the transaction ends (nothing else ends it meanwhile). */
export function lockProcessingGeneration(db: Db, id: string): Promise<GenerationRow | undefined> {
  return db.selectFrom('generations').selectAll().where('id', '=', id).where('status', '=', 'processing').forUpdate().executeTakeFirst();
}

/** Moves a processing generation to its end state; returns undefined if it had already ended. */
export function finishGeneration(
  db: Db,
  id: string,
  end:
    | { status: 'completed'; result_keys: string[]; result_meta: Record<string, unknown>; output_bytes?: number; credits?: number }
    | { status: 'failed'; error: string },
): Promise<GenerationRow | undefined> {
  const set =
    end.status === 'completed'
      ? // Done: its progress is whole and no stage is left; a failure keeps how far it got. `credits`: what it cost when it made less than asked.
        { status: end.status, result_keys: end.result_keys, result_meta: JSON.stringify(end.result_meta), output_bytes: end.output_bytes ?? 0, completed_at: sql<Date>`now()`, progress: 1, stage: null, ...(end.credits !== undefined ? { credits: end.credits } : {}) }
      : { status: end.status, error: end.error, completed_at: sql<Date>`now()` };
  return db
    .updateTable('generations')
    .set(set)
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .returningAll()
    .executeTakeFirst();
}

/**
 * A processing generation's live progress, written only when it changed and, with `minGapMs`, only
 * when the last write is at least that old (a flood of reports becomes a few writes a second); the
 * change notice goes out in the same statement, as notifyGenerationChanged sends it. Answers
 * whether it was written.
 */
export async function writeGenerationProgress(db: Db, id: string, p: { progress: number | null; stage: string }, minGapMs: number | null): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    with moved as (
      update generations set progress = ${p.progress}::real, stage = ${p.stage}, progress_at = clock_timestamp()
      where id = ${id}::uuid and status = 'processing'
        and (progress is distinct from ${p.progress}::real or stage is distinct from ${p.stage})
        and (${minGapMs}::int is null or progress_at is null or progress_at <= clock_timestamp() - make_interval(secs => ${minGapMs}::int / 1000.0))
      returning id, team_id, status
    )
    select id, pg_notify(${GENERATION_EVENTS_CHANNEL}, json_build_object('id', id, 'team_id', team_id, 'status', status, 'at', (extract(epoch from clock_timestamp()) * 1000)::bigint)::text)
    from moved`.execute(db);
  return rows.length > 0;
}

export function overdueGenerationIds(db: Db, limit = 100): Promise<string[]> {
  return db
    .selectFrom('generations')
    .select('id')
    .where('status', '=', 'processing')
    .where('deadline_at', '<', sql<Date>`now()`)
    .limit(limit)
    .execute()
    .then((rows) => rows.map((r) => r.id));
}

/** The product links of the team's generations among `generationIds`. */
export function productLinksOfGenerations(db: Db, teamId: string, generationIds: readonly string[]): Promise<{ generation_id: string; product_id: string }[]> {
  if (!generationIds.length) return Promise.resolve([]);
  return db
    .selectFrom('generation_products')
    .innerJoin('generations', 'generations.id', 'generation_products.generation_id')
    .select(['generation_products.generation_id', 'generation_products.product_id'])
    .where('generations.team_id', '=', teamId)
    .where('generation_products.generation_id', 'in', [...generationIds])
    .execute();
}

export interface DebitedGeneration {
  /** Chosen by the caller, so that an outcome naming it can be stored before the statement runs. */
  id: string;
  teamId: string;
  apiKeyId: string | null;
  operation: string;
  type: string;
  kind: string;
  params: Record<string, unknown>;
  credits: number;
  sourceGenerationId: string | null;
  deadlineAt: Date;
  productIds: string[];
  avatarIds: string[];
}

/**
 * Debit, generation, ledger line, links and its job in ONE statement (no BEGIN/COMMIT needed).
 *
 * `debit: 'last'` (autocommit): `fits` reads the balance without a lock; the rows are written only
 * if the credits fit; the debit is a data-modifying CTE the main query does not read, so
 * PostgreSQL runs it last and the team row is locked only from the debit to the commit.
 * Concurrent creates that spent the credits since `fits` was read make the `credits_within_limit`
 * CHECK refuse it (23514): the whole statement is undone and the caller retries.
 *
 * `debit: 'first'` (inside a transaction that holds the row lock until its COMMIT anyway): the
 * guarded UPDATE comes first and the rows are written from what it returns. A concurrent debit
 * makes it wait and re-check the limit on the new row, so it never fails on the CHECK and needs
 * no savepoint: it simply writes nothing when the credits no longer fit.
 *
 * `{ claim }`: the debit last, with an Idempotency-Key claimed by the same statement (claimKeyCte).
 *
 * Answers the new id, or null and the balance read at the statement's start.
 */
export async function insertGenerationDebited(
  db: Db,
  g: DebitedGeneration,
  /** The worker job that renders it, built by its contract (src/jobs/run-generation.ts); queued only if the generation is written. */
  job: JobSpec,
  mode: 'first' | 'last' | { claim: KeyClaim } = 'last',
): Promise<{ id: string | null; available: number; claimed: boolean }> {
  const debit = mode === 'first' ? 'first' : 'last';
  const fits = sql`fits as (select credits_limit - credits_used as available from teams where id = ${g.teamId}::uuid)`;
  // Claiming a key (the debit last): its row is what the generation is written from.
  const key = typeof mode === 'object' && claimKeyCte(mode.claim, sql`fits where fits.available >= ${g.credits}::int`);
  const insert = (from: RawBuilder<unknown>) => sql`generation as (
      insert into generations (id, team_id, api_key_id, operation, type, kind, params, credits, source_generation_id, deadline_at)
      select ${g.id}::uuid, ${g.teamId}::uuid, ${g.apiKeyId}::uuid, ${g.operation}, ${g.type}, ${g.kind}, ${JSON.stringify(g.params)}::jsonb,
             ${g.credits}::int, ${g.sourceGenerationId}::uuid, ${g.deadlineAt}::timestamptz
      ${from}
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
    )`;
  const ctes =
    debit === 'last'
      ? sql`${fits}, ${key ? sql`${key}, ${insert(sql`from claimed`)}` : insert(sql`from fits where fits.available >= ${g.credits}::int`)}, debit as (
          update teams set credits_used = credits_used + ${g.credits}::int
          where id = ${g.teamId}::uuid and exists (select from generation)
        )`
      : sql`${fits}, debit as (
          update teams set credits_used = credits_used + ${g.credits}::int
          where id = ${g.teamId}::uuid and credits_used + ${g.credits}::int <= credits_limit
          returning id
        ), ${insert(sql`from debit`)}`;
  const query = sql<{ available: number; id: string | null; claimed: boolean }>`
    with ${ctes}
    select fits.available, queued.id, ${key ? sql`exists (select from claimed)` : sql`false`} as claimed
    from fits
    left join (
      select generation.id
      from generation
      cross join lateral graphile_worker.add_job(
        identifier => ${job.identifier}::text,
        payload => ${JSON.stringify(job.payload)}::json,
        max_attempts => ${job.maxAttempts}::int,
        job_key => ${job.jobKey ?? null}::text,
        run_at => ${job.runAt ?? null}::timestamptz,
        priority => ${job.priority ?? null}::int
      ) as job
    ) as queued on true`;
  const name = key ? 'adforge_create_generation_claiming_key' : `adforge_create_generation_debit_${debit}`;
  const { rows } = await db.executeQuery(prepareHot(name, query.compile(db)));
  const row = rows[0];
  if (!row) return { id: null, available: 0, claimed: false };
  return { id: row.id, available: Math.max(0, Number(row.available)), claimed: row.claimed };
}

/** An Idempotency-Key claimed by the create statement itself, with the answer stored under it. */
export interface KeyClaim {
  row: StoredKey;
  /** A stored answer older than this no longer holds the key: it is overwritten. */
  windowHours: number;
}

/**
 * `claimed`: the key's row, inserted with its answer, under the key's advisory lock (the lock the
 * transactional path takes too, so the two never interleave), only when `from` yields a row. A row
 * already under the key that is still inside the window leaves `claimed` empty (nothing else is
 * written); the unique index makes a concurrent first claim wait for the other to end.
 */
function claimKeyCte(claim: KeyClaim, from: RawBuilder<unknown>) {
  const r = claim.row;
  return sql`key_lock as (
      select pg_advisory_xact_lock(hashtextextended(${keyLockName(r)}, 0))
    ), claimed as (
      insert into idempotency_keys (team_id, method, path, key, request_hash, response_status, response_body)
      select ${r.team_id}::uuid, ${r.method}, ${r.path}, ${r.key}, ${r.request_hash}::bytea, ${r.response_status}::int, ${r.response_body}::jsonb
      from key_lock, ${from}
      on conflict (team_id, method, path, key) do update
        set request_hash = excluded.request_hash, response_status = excluded.response_status,
            response_body = excluded.response_body, created_at = now()
        where idempotency_keys.created_at <= now() - make_interval(hours => ${claim.windowHours}::int)
      returning 1
    )`;
}

/**
 * Many generations of one team in one statement: their rows, ledger lines, links and jobs (one
 * `add_jobs`), and one debit of their sum. The caller holds the team's row (lockTeam) and has
 * checked that the sum fits; the `credits_within_limit` CHECK still refuses anything that does not.
 */
export async function insertGenerationsDebited(trx: Db, teamId: string, gs: DebitedGeneration[], jobs: readonly JobSpec[]): Promise<void> {
  if (!gs.length) return;
  if (jobs.length !== gs.length) throw new Error(`${gs.length} generations, ${jobs.length} jobs: each generation is queued with its own`);
  const specs = JSON.stringify(
    jobs.map((j) => ({ identifier: j.identifier, payload: j.payload, max_attempts: j.maxAttempts, job_key: j.jobKey, run_at: j.runAt, priority: j.priority })),
  );
  const input = JSON.stringify(
    gs.map((g) => ({
      id: g.id,
      api_key_id: g.apiKeyId,
      operation: g.operation,
      type: g.type,
      kind: g.kind,
      params: g.params,
      credits: g.credits,
      source_generation_id: g.sourceGenerationId,
      deadline_at: g.deadlineAt,
      product_ids: g.productIds,
      avatar_ids: g.avatarIds,
    })),
  );
  await sql`
    with input as (
      select * from jsonb_to_recordset(${input}::jsonb) as x(
        id uuid, api_key_id uuid, operation text, type text, kind text, params jsonb, credits int,
        source_generation_id uuid, deadline_at timestamptz, product_ids uuid[], avatar_ids uuid[])
    ), debit as (
      update teams set credits_used = credits_used + (select sum(credits) from input)
      where id = ${teamId}::uuid
    ), generation as (
      insert into generations (id, team_id, api_key_id, operation, type, kind, params, credits, source_generation_id, deadline_at)
      select id, ${teamId}::uuid, api_key_id, operation, type, kind, params, credits, source_generation_id, deadline_at from input
      returning id
    ), ledger as (
      insert into credit_ledger (team_id, kind, amount, subject_type, subject_id)
      select ${teamId}::uuid, 'debit', credits, 'generation', id from input
    ), products as (
      insert into generation_products (generation_id, product_id)
      select input.id, p from input, unnest(input.product_ids) as p
    ), avatars as (
      insert into generation_avatars (generation_id, avatar_id)
      select input.id, a from input, unnest(input.avatar_ids) as a
    )
    select from graphile_worker.add_jobs(array(
      select json_populate_record(null::graphile_worker.job_spec, spec)
      from json_array_elements(${specs}::json) as spec))`.execute(trx);
}

/** What the team can still spend (a plain read, after a lost race for the last credits). */
export async function availableCredits(db: Db, teamId: string): Promise<number> {
  const row = await db.selectFrom('teams').select(sql<number>`credits_limit - credits_used`.as('available')).where('id', '=', teamId).executeTakeFirst();
  return Math.max(0, Number(row?.available ?? 0));
}
