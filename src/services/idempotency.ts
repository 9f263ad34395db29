import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { Database } from '../db/types.ts';
import { AppError } from '../domain/errors.ts';
import { findStoredOutcome, findStoredOutcomes, lockKey, lockKeys, purgeKeysOlderThan, storeOutcome, storeOutcomes } from '../repositories/idempotency-keys.ts';

export const IDEMPOTENCY_WINDOW_HOURS = 24;

export interface IdempotencyScope {
  teamId: string;
  method: string;
  path: string;
  key: string;
}

/** The request-side half of a scope: the team comes from the caller's key. */
export interface IdempotencyRequest {
  key: string;
  method: string;
  path: string;
}

export interface Outcome {
  status: number;
  body: unknown;
}

export interface RecordedOutcome extends Outcome {
  replayed: boolean;
}

/**
 * A repeat that arrives while the first request is in flight waits this long for it and then
 * replays its outcome; a first request still running after that makes the repeat a 409.
 */
export const IDEMPOTENCY_WAIT_MS = 5000;

// Outcomes a client may rely on seeing again; 400s and 5xx leave the key usable (DESIGN decision 2).
const STORED_ERROR_STATUSES = new Set([402, 404, 409]);

/** 1-255 printable ASCII characters, or absent. */
export function parseIdempotencyKey(raw: string | string[] | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined || !/^[\x20-\x7e]{1,255}$/.test(key)) {
    throw new AppError('validation_error', 'Idempotency-Key: must be 1-255 printable ASCII characters');
  }
  return key;
}

/** The same JSON, whatever the key order or spacing, hashes the same. */
export function requestHash(body: unknown): Buffer {
  return createHash('sha256').update(canonicalJson(body ?? null)).digest();
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * What the work may call to store its (successful) outcome itself before its last write, so that
 * the row that write locks (a team's credits) is held for less of the transaction. Should the work
 * fail afterwards, that outcome is undone with the rest.
 */
export type RecordOutcome = (outcome: Outcome) => Promise<void>;
type Work = (trx: Transaction<Database>, record: RecordOutcome) => Promise<Outcome>;

/** Runs the work and stores its outcome under the key, unless the work stored it itself. */
async function workAndStore(trx: Transaction<Database>, scope: IdempotencyScope, hash: Buffer, work: Work): Promise<Outcome> {
  let recorded: Outcome | undefined;
  const outcome = await work(trx, async (o) => {
    await store(trx, scope, hash, o);
    recorded = o;
  });
  if (recorded !== outcome) await store(trx, scope, hash, outcome);
  return outcome;
}

/**
 * Runs `work` in one transaction that also records its outcome under the key, so a create and
 * its stored response commit together or not at all. A transaction-scoped advisory lock on the
 * key orders concurrent repeats behind the first; once it commits, they replay its outcome.
 * No savepoint: when the work refuses with an outcome worth storing (402, 404, 409), the whole
 * transaction is undone and the refusal is stored in one of its own.
 */
export async function runIdempotent(
  db: Db,
  scope: IdempotencyScope | undefined,
  hash: Buffer,
  work: Work,
): Promise<RecordedOutcome> {
  if (!scope) return { ...(await db.transaction().execute((trx) => work(trx, async () => {}))), replayed: false };
  let refusal: AppError | undefined;
  try {
    return await db.transaction().execute(async (trx) => {
      const stored = await claim(trx, scope, hash);
      if (stored) return stored;
      try {
        return { ...(await workAndStore(trx, scope, hash, work)), replayed: false };
      } catch (e) {
        if (isStoredRefusal(e)) refusal = e;
        throw e;
      }
    });
  } catch (e) {
    if (!refusal || e !== refusal) throw e;
  }
  return storeRefusal(db, scope, hash, refusal);
}

/**
 * Stores a refusal worth replaying (402, 404, 409) under the key in a transaction of its own,
 * unless the key already has an answer (a repeat stored one meanwhile): that one is the key's.
 */
export function storeRefusal(db: Db, scope: IdempotencyScope, hash: Buffer, refusal: AppError): Promise<RecordedOutcome> {
  const refused: Outcome = { status: refusal.status, body: refusal.toBody() };
  return db.transaction().execute(async (trx) => {
    const stored = await claim(trx, scope, hash);
    if (stored) return stored;
    await store(trx, scope, hash, refused);
    return { ...refused, replayed: false };
  });
}

/** A refusal a client may rely on seeing again under its key (402, 404, 409), rather than a 400 or a fault. */
export const isStoredRefusal = (e: unknown): e is AppError => e instanceof AppError && STORED_ERROR_STATUSES.has(e.status);

/**
 * claim() for a batch of keys of one team inside a transaction the caller owns: every key locked
 * (in one fixed order; a 409 when one stays held too long), then every stored outcome read at
 * once. Answers, per scope, its stored outcome, undefined, or the 400 of a key reused with a
 * different body.
 */
export async function claimMany(
  trx: Transaction<Database>,
  teamId: string,
  claims: { scope: IdempotencyRequest; hash: Buffer }[],
): Promise<(RecordedOutcome | AppError | undefined)[]> {
  if (!(await lockKeys(trx, claims.map((c) => ({ teamId, ...c.scope })), IDEMPOTENCY_WAIT_MS))) throw keyInUse();
  const found = await findStoredOutcomes(trx, teamId, claims.map((c) => c.scope));
  const byScope = new Map(found.map((f) => [JSON.stringify([f.method, f.path, f.key]), f]));
  return claims.map(({ scope, hash }) => {
    const existing = byScope.get(JSON.stringify([scope.method, scope.path, scope.key]));
    return existing ? replayOf(existing, hash) : undefined;
  });
}

/** store() for many keys of one team in one statement. */
export function storeMany(trx: Transaction<Database>, teamId: string, entries: { scope: IdempotencyRequest; hash: Buffer; outcome: Outcome }[]): Promise<void> {
  return storeOutcomes(trx, entries.map(({ scope, hash, outcome }) => keyRow({ teamId, ...scope }, hash, outcome)));
}

/** The 409 of a key whose first request is still running after the wait. */
export const keyInUse = () => new AppError('conflict', 'A request with this Idempotency-Key is still in progress; retry when it has finished');

/** Takes the key's lock (a 409 when a first request holds it too long), then answers its stored outcome if any. */
async function claim(trx: Transaction<Database>, scope: IdempotencyScope, hash: Buffer): Promise<RecordedOutcome | undefined> {
  if (!(await lockKey(trx, scope, IDEMPOTENCY_WAIT_MS))) throw keyInUse();
  return storedOutcome(trx, scope, hash);
}

/** The row an outcome is stored as under its key. */
export const keyRow = (scope: IdempotencyScope, hash: Buffer, outcome: Outcome) => ({
  team_id: scope.teamId,
  method: scope.method,
  path: scope.path,
  key: scope.key,
  request_hash: hash,
  response_status: outcome.status,
  response_body: outcome.body === undefined ? null : JSON.stringify(outcome.body),
});

function store(trx: Transaction<Database>, scope: IdempotencyScope, hash: Buffer, outcome: Outcome): Promise<void> {
  return storeOutcome(trx, keyRow(scope, hash, outcome));
}

/**
 * The outcome already stored under the key, if any (a different body under the same key is a 400).
 * Lets work that must happen outside the transaction (a synchronous voiceover) be skipped on a replay.
 */
export async function storedOutcome(db: Db, scope: IdempotencyScope, hash: Buffer): Promise<RecordedOutcome | undefined> {
  const replay = replayOf(await findStoredOutcome(db, scope), hash);
  if (replay instanceof AppError) throw replay;
  return replay;
}

type StoredRow = { request_hash: Buffer; response_status: number; response_body: unknown; created_at: Date };

/** A stored outcome still inside the window is replayed; under a different body it is a 400. */
function replayOf(existing: StoredRow | undefined, hash: Buffer): RecordedOutcome | AppError | undefined {
  if (!existing || existing.created_at.getTime() <= Date.now() - IDEMPOTENCY_WINDOW_HOURS * 3600_000) return undefined;
  if (!existing.request_hash.equals(hash)) {
    return new AppError('validation_error', 'Idempotency-Key: this key was already used with a different request body');
  }
  return { status: existing.response_status, body: existing.response_body ?? undefined, replayed: true };
}

export const purgeExpiredIdempotencyKeys = (db: Db): Promise<number> => purgeKeysOlderThan(db, IDEMPOTENCY_WINDOW_HOURS);
