import { z } from 'zod';
import type { CampaignRow } from '../../db/types.ts';
import { AppError } from '../../domain/errors.ts';
import { pageQuery } from '../../domain/inputs.ts';
import { parseInput } from '../../domain/validate.ts';
import {
  campaignCounts,
  campaignRows,
  countRows,
  findTeamCampaign,
  lockCampaign,
  markCampaignRunning,
  openCampaign,
  pendingNeed,
  storedRowBodies,
  writePendingRows,
  type CampaignCounts,
} from '../../repositories/campaigns.ts';
import { notifyCampaignChanged } from '../../repositories/notifications.ts';
import { availableCredits } from '../../repositories/credits.ts';
import { queueJob } from '../../jobs/define.ts';
import { runCampaignJob } from '../../jobs/run-campaign.ts';
import type { Deps } from '../deps.ts';
import type { Principal } from '../principal.ts';
import { requireUuid } from '../ids.ts';
import { paginated, type Paginated } from '../paginated.ts';
import { requestHash } from '../idempotency.ts';
import type { RowChecker, RowInput } from './check.ts';

export interface Campaign {
  id: string;
  name: string;
  status: CampaignRow['status'];
  /** Every row submitted and none of their generations still processing. */
  finished: boolean;
  counts: CampaignCounts;
  created_at: string;
  started_at: string | null;
  submitted_at: string | null;
}

export interface CampaignRowView {
  row_number: number;
  row_key: string | null;
  type: string;
  /** pending (not submitted yet), processing, completed, failed, or deleted (its generation was deleted after it ended). */
  status: 'pending' | 'processing' | 'completed' | 'failed' | 'deleted';
  credits: number;
  generation_id: string | null;
  voiceover_id: string | null;
  result_url: string | null;
  error: string | null;
}

const campaignName = z.string({ error: 'is required' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

export function createCampaignService({ db, storage, config }: Pick<Deps, 'db' | 'storage' | 'config'>, checker: RowChecker) {
  async function load(p: Principal, id: unknown): Promise<CampaignRow> {
    const row = await findTeamCampaign(db, p.teamId, requireUuid(id));
    if (!row) throw new AppError('not_found', 'Campaign not found');
    return row;
  }

  async function view(row: CampaignRow): Promise<Campaign> {
    const counts = await campaignCounts(db, row.id);
    return {
      id: row.id,
      name: row.name,
      status: row.status,
      finished: row.status === 'submitted' && counts.pending === 0 && counts.processing === 0,
      counts,
      created_at: row.created_at.toISOString(),
      started_at: row.started_at?.toISOString() ?? null,
      submitted_at: row.submitted_at?.toISOString() ?? null,
    };
  }

  return {
    view,

    check: (p: Principal, rows: readonly RowInput[]) => checker.check(p.teamId, rows),

    /** The team's campaign of that name, made if new: running a file again with its name continues it. */
    async open(p: Principal, name: unknown): Promise<Campaign> {
      const n = parseInput(campaignName, name, 'name');
      return view(await openCampaign(db, { team_id: p.teamId, api_key_id: p.keyId, name: n }));
    },

    async get(p: Principal, id: unknown): Promise<Campaign> {
      return view(await load(p, id));
    },

    /**
     * Stores checked rows; any bad row refuses the whole call (nothing bad is ever stored). Rows
     * already submitted are kept as they are: that is what makes a re-run continue, not repeat.
     */
    async addRows(p: Principal, id: unknown, rows: readonly RowInput[]): Promise<{ stored: number; kept: number; changed: number }> {
      const campaign = await load(p, id);
      const checked = await checker.check(p.teamId, rows);
      const bad = checked.filter((r) => !r.ok);
      if (bad.length) {
        const first = bad[0]!;
        const problem = !first.ok ? first.problems[0] : undefined;
        throw new AppError('validation_error', `rows: ${bad.length} invalid (row ${first.row_number} ${problem?.field}: ${problem?.message}); check them first`);
      }
      if (!checked.length) return { stored: 0, kept: 0, changed: 0 };
      const values = checked.map((r) => {
        if (!r.ok) throw new Error('unreachable');
        return { campaign_id: campaign.id, row_number: r.row_number, row_key: r.row_key, type: r.type, body: JSON.stringify(r.body), credits: r.credits };
      });
      // Under the campaign's lock, so two calls at once cannot both fit in the last places.
      const { written, stored } = await db.transaction().execute(async (trx) => {
        await lockCampaign(trx, campaign.id);
        const stored = await storedRowBodies(trx, campaign.id, values.map((v) => v.row_number));
        const total = (await countRows(trx, campaign.id)) + new Set(values.map((v) => v.row_number)).size - stored.length;
        if (total > config.campaignMaxRows) {
          throw new AppError('validation_error', `rows: a campaign holds at most ${config.campaignMaxRows} rows (CAMPAIGN_MAX_ROWS); this call would make it ${total}`);
        }
        return { written: await writePendingRows(trx, values), stored };
      });
      const writtenRows = new Set(written);
      const keptValues = values.filter((v) => !writtenRows.has(v.row_number));
      // A kept row whose cells now say something else: most likely another file run under the same name.
      let changed = 0;
      if (keptValues.length) {
        const byNumber = new Map(stored.map((r) => [r.row_number, requestHash({ type: r.type, body: r.body }).toString('hex')]));
        changed = keptValues.filter((v) => byNumber.get(v.row_number) !== requestHash({ type: v.type, body: JSON.parse(v.body) }).toString('hex')).length;
      }
      return { stored: written.length, kept: keptValues.length, changed };
    },

    /**
     * Starts (or resumes) submitting the pending rows. Refused before anything starts when the
     * team's credits cannot pay for all of them.
     */
    async start(p: Principal, id: unknown): Promise<Campaign> {
      const campaign = await load(p, id);
      const row = await db.transaction().execute(async (trx) => {
        const c = await lockCampaign(trx, campaign.id);
        const need = await pendingNeed(trx, c.id);
        if ((await countRows(trx, c.id)) === 0) throw new AppError('validation_error', 'The campaign has no rows to run');
        if (Number(need.rows) === 0) return c;
        const available = await availableCredits(trx, p.teamId);
        if (Number(need.credits) > available) {
          throw new AppError('insufficient_credits', `Not enough credits: the campaign's ${need.rows} rows to run need ${need.credits} credits and ${available} are available`);
        }
        const started = await markCampaignRunning(trx, c.id, p.keyId);
        await queueJob(trx, runCampaignJob, { campaign_id: c.id });
        await notifyCampaignChanged(trx, started);
        return started;
      });
      return view(row);
    },

    async rows(p: Principal, id: unknown, query: unknown): Promise<Paginated<CampaignRowView>> {
      const campaign = await load(p, id);
      const page = parseInput(pageQuery, query ?? {});
      // Only the total is needed here: a plain count, not the counts' join over every generation.
      const [rows, total] = await Promise.all([campaignRows(db, campaign.id, page.limit, page.offset), countRows(db, campaign.id)]);
      const data = await Promise.all(
        rows.map(async (r): Promise<CampaignRowView> => ({
          row_number: r.row_number,
          row_key: r.row_key,
          type: r.type,
          status: r.deleted_generation_id
            ? 'deleted'
            : r.state === 'failed' ? 'failed' : r.state === 'pending' ? 'pending' : r.voiceover_id ? 'completed' : ((r.generation_status ?? 'failed') as CampaignRowView['status']),
          // What was charged stays what was charged: a deleted generation keeps its credits.
          credits: r.state === 'failed' || r.generation_status === 'failed' ? 0 : (r.generation_credits ?? r.credits),
          generation_id: r.generation_id ?? r.deleted_generation_id,
          voiceover_id: r.voiceover_id,
          result_url: r.result_key && !r.deleted_generation_id && (r.voiceover_id || r.generation_status === 'completed') ? await storage.signedUrl(r.result_key) : null,
          error: r.deleted_generation_id ? `the generation was deleted (it had ${r.generation_status ?? 'ended'})` : (r.error ?? r.generation_error),
        })),
      );
      return paginated(data, total, page);
    },
  };
}
