import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { CampaignRow, CampaignRowRow } from '../db/types.ts';

export interface CampaignCounts {
  total: number;
  pending: number;
  submitted: number;
  processing: number;
  completed: number;
  failed: number;
  credits_estimate: number;
  credits_spent: number;
}

/**
 * How far the campaign has come: its counters, kept by triggers as its rows and their generations
 * change (migration 0013), so a read costs one row, however many rows the campaign has.
 */
export async function campaignCounts(db: Db, campaignId: string): Promise<CampaignCounts> {
  const { rows } = await sql<CampaignCounts>`
    select total, pending, submitted, processing, completed, failed,
      credits_estimate::int as credits_estimate, credits_spent::int as credits_spent
    from campaign_counters
    where campaign_id = ${campaignId}`.execute(db);
  return rows[0] ?? { total: 0, pending: 0, submitted: 0, processing: 0, completed: 0, failed: 0, credits_estimate: 0, credits_spent: 0 };
}

export async function countRows(db: Db, campaignId: string): Promise<number> {
  const r = await db.selectFrom('campaign_rows').select((eb) => eb.fn.countAll<number>().as('n')).where('campaign_id', '=', campaignId).executeTakeFirstOrThrow();
  return Number(r.n);
}

export interface CampaignRowResult {
  row_number: number;
  row_key: string | null;
  type: string;
  state: 'pending' | 'submitted' | 'failed';
  credits: number;
  generation_id: string | null;
  /** The id of the row's generation once that was deleted (generation_id is then null). */
  deleted_generation_id: string | null;
  voiceover_id: string | null;
  /** The generation's status, or the last it had when it was deleted. */
  generation_status: string | null;
  generation_error: string | null;
  generation_credits: number | null;
  result_key: string | null;
  error: string | null;
}

export async function campaignRows(db: Db, campaignId: string, limit: number, offset: number): Promise<CampaignRowResult[]> {
  const { rows } = await sql<CampaignRowResult>`
    select r.row_number, r.row_key, r.type, r.state, r.credits, r.generation_id, r.deleted_generation_id, r.voiceover_id, r.error,
      coalesce(g.status, r.generation_status) as generation_status, g.error as generation_error,
      coalesce(g.credits, r.generation_credits) as generation_credits,
      coalesce(g.result_keys[1], v.audio_key) as result_key
    from campaign_rows r
    left join generations g on g.id = r.generation_id
    left join voiceovers v on v.id = r.voiceover_id
    where r.campaign_id = ${campaignId}
    order by r.row_number
    limit ${limit} offset ${offset}`.execute(db);
  return rows;
}

export function findCampaign(db: Db, id: string): Promise<CampaignRow | undefined> {
  return db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findTeamCampaign(db: Db, teamId: string, id: string): Promise<CampaignRow | undefined> {
  return db.selectFrom('campaigns').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

/** The team's campaign of that name, made if new. */
export async function openCampaign(db: Db, c: { team_id: string; api_key_id: string | null; name: string }): Promise<CampaignRow> {
  await db.insertInto('campaigns').values(c).onConflict((oc) => oc.columns(['team_id', 'name']).doNothing()).execute();
  return db.selectFrom('campaigns').selectAll().where('team_id', '=', c.team_id).where('name', '=', c.name).executeTakeFirstOrThrow();
}

export function lockCampaign(trx: Db, id: string): Promise<CampaignRow> {
  return trx.selectFrom('campaigns').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
}

/** How many rows are still to run and what they cost. */
export async function pendingNeed(db: Db, campaignId: string): Promise<{ rows: number; credits: number }> {
  const r = await db
    .selectFrom('campaign_rows')
    .select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.coalesce(eb.fn.sum<number>('credits'), sql<number>`0`).as('credits')])
    .where('campaign_id', '=', campaignId)
    .where('state', '=', 'pending')
    .executeTakeFirstOrThrow();
  return { rows: Number(r.rows), credits: Number(r.credits) };
}

export function markCampaignRunning(trx: Db, id: string, apiKeyId: string | null): Promise<CampaignRow> {
  return trx
    .updateTable('campaigns')
    .set({ status: 'running', started_at: sql`coalesce(started_at, now())`, submitted_at: null, api_key_id: apiKeyId })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Marks the campaign submitted unless rows were added meanwhile (those get their own run). */
export async function markCampaignSubmittedIfDone(db: Db, id: string): Promise<boolean> {
  const done = await db
    .updateTable('campaigns')
    .set({ status: 'submitted', submitted_at: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('campaign_rows').select('row_number').where('campaign_id', '=', id).where('state', '=', 'pending'))))
    .returning('id')
    .executeTakeFirst();
  return Boolean(done);
}

export type CampaignRowValues = { campaign_id: string; row_number: number; row_key: string | null; type: string; body: string; credits: number };

/** Writes rows still pending (new or changed); rows already submitted are kept. Returns the numbers written. */
export async function writePendingRows(db: Db, values: readonly CampaignRowValues[]): Promise<number[]> {
  const written = await db
    .insertInto('campaign_rows')
    .values([...values])
    .onConflict((oc) =>
      oc
        .columns(['campaign_id', 'row_number'])
        .doUpdateSet((eb) => ({
          row_key: eb.ref('excluded.row_key'),
          type: eb.ref('excluded.type'),
          body: eb.ref('excluded.body'),
          credits: eb.ref('excluded.credits'),
          updated_at: sql`now()`,
        }))
        .where('campaign_rows.state', '=', 'pending'),
    )
    .returning('row_number')
    .execute();
  return written.map((w) => w.row_number);
}

export function storedRowBodies(db: Db, campaignId: string, rowNumbers: readonly number[]): Promise<{ row_number: number; type: string; body: unknown }[]> {
  if (!rowNumbers.length) return Promise.resolve([]);
  return db.selectFrom('campaign_rows').select(['row_number', 'type', 'body']).where('campaign_id', '=', campaignId).where('row_number', 'in', [...rowNumbers]).execute();
}

export function pendingRowsAfter(db: Db, campaignId: string, after: number, limit: number): Promise<CampaignRowRow[]> {
  return db
    .selectFrom('campaign_rows')
    .selectAll()
    .where('campaign_id', '=', campaignId)
    .where('state', '=', 'pending')
    .where('row_number', '>', after)
    .orderBy('row_number')
    .limit(limit)
    .execute();
}

export interface RowOutcome {
  row_number: number;
  state: 'submitted' | 'failed';
  generation_id: string | null;
  voiceover_id: string | null;
  error: string | null;
}

/** Pending rows' ends, submitted (with what each made) or failed, in one statement. A row no longer pending is left alone. */
export async function recordRowOutcomes(db: Db, campaignId: string, outcomes: RowOutcome[]): Promise<void> {
  if (!outcomes.length) return;
  await sql`
    update campaign_rows as r
    set state = o.state, generation_id = o.generation_id, voiceover_id = o.voiceover_id, error = o.error, updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(outcomes)}::jsonb)
      as o(row_number int, state text, generation_id uuid, voiceover_id uuid, error text)
    where r.campaign_id = ${campaignId}::uuid and r.row_number = o.row_number and r.state = 'pending'`.execute(db);
}
