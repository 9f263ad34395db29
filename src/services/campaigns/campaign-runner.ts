import pLimit from 'p-limit';
import type { CampaignRowRow } from '../../db/types.ts';
import { AppError } from '../../domain/errors.ts';
import type { GenerationOperation } from '../../domain/generation-types.ts';
import { findCampaign, markCampaignSubmittedIfDone, pendingRowsAfter, recordRowOutcomes, type RowOutcome } from '../../repositories/campaigns.ts';
import { notifyCampaignChanged } from '../../repositories/notifications.ts';
import type { Deps } from '../deps.ts';
import type { Principal } from '../principal.ts';
import type { GenerationCreator } from '../generations/create.ts';
import type { RecordedOutcome } from '../idempotency.ts';
import type { VoiceoverService } from '../voiceovers.ts';

/** Rows read per round; each round ends with a progress notice. */
const BATCH = 50;
/** Voiceovers made at once: each is a few hundred ms of CPU. */
const CONCURRENCY = 4;

const errorOf = (outcome: RecordedOutcome) => (outcome.body as { error?: { message?: string } } | undefined)?.error?.message ?? `answered ${outcome.status}`;

export function createCampaignRunner(
  { db, log }: Pick<Deps, 'db' | 'log'>,
  creator: Pick<GenerationCreator, 'createManyIn'>,
  voiceovers: Pick<VoiceoverService, 'textToSpeech'>,
) {
  const idemOf = (row: CampaignRowRow) => ({ key: `campaign:${row.campaign_id}:${row.row_number}`, method: 'POST', path: `campaign:${row.type}` });

  /** A refused create (402, 404, 400...) is the row's failure; anything else is the job's, and it retries. */
  const refusal = (e: unknown): RecordedOutcome => {
    // A 409 is another runner holding this row's key right now: retry later rather than fail the row.
    if (!(e instanceof AppError) || e.status === 500 || e.code === 'conflict') throw e;
    return { status: e.status, body: e.toBody(), replayed: false };
  };

  function rowOutcome(row: CampaignRowRow, outcome: RecordedOutcome): RowOutcome {
    const ok = outcome.status >= 200 && outcome.status < 300;
    const body = outcome.body as { generation_id?: string; id?: string } | undefined;
    const id = ok ? (body?.generation_id ?? body?.id ?? null) : null;
    const tts = row.type === 'text-to-speech';
    return {
      row_number: row.row_number,
      state: ok ? 'submitted' : 'failed',
      generation_id: ok && !tts ? id : null,
      voiceover_id: ok && tts ? id : null,
      error: ok ? null : errorOf(outcome),
    };
  }

  /**
   * Generation rows go through the same create as their endpoint, each under the Idempotency-Key
   * campaign id + row number, all of a batch in one transaction with their row updates: the keys
   * and the team's row are locked once per batch, the accepted rows written in one statement, and
   * a crash leaves either the whole batch done or none of it (a second runner replays rather than
   * charging again).
   */
  async function submitGenerations(p: Principal, campaignId: string, rows: CampaignRowRow[]): Promise<void> {
    if (!rows.length) return;
    const items = rows.map((row) => ({ operation: row.type as GenerationOperation, body: row.body, idem: idemOf(row) }));
    await db.transaction().execute(async (trx) => {
      const outcomes = await creator.createManyIn(trx, p, items);
      await recordRowOutcomes(trx, campaignId, rows.map((row, i) => rowOutcome(row, outcomes[i]!)));
    });
  }

  /** Text-to-speech rows are voiceovers, made synchronously (seconds of engine work): one at a time each. */
  async function submitVoiceover(p: Principal, row: CampaignRowRow): Promise<void> {
    const outcome = await voiceovers.textToSpeech(p, row.body, idemOf(row)).catch(refusal);
    await recordRowOutcomes(db, row.campaign_id, [rowOutcome(row, outcome)]);
  }

  return {
    async run(campaignId: string): Promise<void> {
      const campaign = await findCampaign(db, campaignId);
      if (!campaign || campaign.status !== 'running') return;
      const p: Principal = { teamId: campaign.team_id, keyId: campaign.api_key_id };
      const limit = pLimit(CONCURRENCY);
      let after = 0;
      for (;;) {
        const rows = await pendingRowsAfter(db, campaignId, after, BATCH);
        if (!rows.length) break;
        const speech = rows.filter((r) => r.type === 'text-to-speech');
        await Promise.all([
          submitGenerations(p, campaignId, rows.filter((r) => r.type !== 'text-to-speech')),
          ...speech.map((r) => limit(() => submitVoiceover(p, r))),
        ]);
        after = rows.at(-1)!.row_number;
        await notifyCampaignChanged(db, campaign);
      }
      // Rows added while this ran get their own job from start(); the campaign stays running for it.
      const done = await markCampaignSubmittedIfDone(db, campaignId);
      if (done) await notifyCampaignChanged(db, campaign);
      log.info({ campaign_id: campaignId, submitted: Boolean(done) }, 'campaign rows submitted');
    },
  };
}
export type CampaignRunner = ReturnType<typeof createCampaignRunner>;
