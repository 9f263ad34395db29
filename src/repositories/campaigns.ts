import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

export const CAMPAIGN_EVENTS_CHANNEL = 'adforge_campaign_events';

export async function notifyCampaignChanged(db: Db, c: { id: string; team_id: string }): Promise<void> {
  await sql`select pg_notify(${CAMPAIGN_EVENTS_CHANNEL}, ${JSON.stringify({ id: c.id, team_id: c.team_id })})`.execute(db);
}

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

/** One pass over the rows and their generations: how far the campaign has come. */
export async function campaignCounts(db: Db, campaignId: string): Promise<CampaignCounts> {
  const { rows } = await sql<CampaignCounts>`
    select
      count(*)::int as total,
      count(*) filter (where r.state = 'pending')::int as pending,
      count(*) filter (where r.state <> 'pending')::int as submitted,
      count(*) filter (where r.state = 'submitted' and g.status = 'processing')::int as processing,
      count(*) filter (where r.state = 'submitted' and (g.status = 'completed' or r.voiceover_id is not null))::int as completed,
      count(*) filter (where r.state = 'failed' or g.status = 'failed')::int as failed,
      coalesce(sum(r.credits), 0)::int as credits_estimate,
      coalesce(sum(case when g.status in ('processing', 'completed') then g.credits
                        when r.state = 'submitted' and r.voiceover_id is not null then r.credits end), 0)::int as credits_spent
    from campaign_rows r
    left join generations g on g.id = r.generation_id
    where r.campaign_id = ${campaignId}`.execute(db);
  return rows[0]!;
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
  voiceover_id: string | null;
  generation_status: string | null;
  generation_error: string | null;
  generation_credits: number | null;
  result_key: string | null;
  error: string | null;
}

export async function campaignRows(db: Db, campaignId: string, limit: number, offset: number): Promise<CampaignRowResult[]> {
  const { rows } = await sql<CampaignRowResult>`
    select r.row_number, r.row_key, r.type, r.state, r.credits, r.generation_id, r.voiceover_id, r.error,
      g.status as generation_status, g.error as generation_error, g.credits as generation_credits,
      coalesce(g.result_keys[1], v.audio_key) as result_key
    from campaign_rows r
    left join generations g on g.id = r.generation_id
    left join voiceovers v on v.id = r.voiceover_id
    where r.campaign_id = ${campaignId}
    order by r.row_number
    limit ${limit} offset ${offset}`.execute(db);
  return rows;
}
