import pLimit from 'p-limit';
import type { CampaignRowRow } from '../../db/types.ts';
import { AppError } from '../../domain/errors.ts';
import type { GenerationOperation } from '../../domain/generation-types.ts';
import { notifyCampaignChanged } from '../../repositories/campaigns.ts';
import type { Deps, Principal } from '../context.ts';
import type { GenerationCreator } from '../generations/create.ts';
import type { RecordedOutcome } from '../idempotency.ts';
import type { VoiceoverService } from '../voiceovers.ts';

/** Rows read per round; each round ends with a progress notice. */
const BATCH = 50;
/** Creates in flight at once: each is a short transaction, voiceovers a few hundred ms of CPU. */
const CONCURRENCY = 4;

const errorOf = (outcome: RecordedOutcome) => (outcome.body as { error?: { message?: string } } | undefined)?.error?.message ?? `answered ${outcome.status}`;

export function createCampaignRunner(
  { db, log }: Pick<Deps, 'db' | 'log'>,
  creator: Pick<GenerationCreator, 'create'>,
  voiceovers: Pick<VoiceoverService, 'textToSpeech'>,
) {
  /**
   * One row through the same service as its endpoint, under the Idempotency-Key campaign id + row
   * number: a crash between the create and recording it here, or a second runner, replays the
   * first create instead of charging again. A refused row (402, 404...) is recorded and the rest go on.
   */
  async function submit(p: Principal, row: CampaignRowRow): Promise<void> {
    const idem = { key: `campaign:${row.campaign_id}:${row.row_number}`, method: 'POST', path: `campaign:${row.type}` };
    let outcome: RecordedOutcome;
    try {
      outcome =
        row.type === 'text-to-speech'
          ? await voiceovers.textToSpeech(p, row.body, idem)
          : await creator.create(p, row.type as GenerationOperation, row.body, idem);
    } catch (e) {
      // A 409 is another runner holding this row's key right now: retry later rather than fail the row.
      if (!(e instanceof AppError) || e.status === 500 || e.code === 'conflict') throw e;
      outcome = { status: e.status, body: e.toBody(), replayed: false };
    }
    const ok = outcome.status >= 200 && outcome.status < 300;
    const id = ok ? ((outcome.body as { generation_id?: string; id?: string }).generation_id ?? (outcome.body as { id?: string }).id ?? null) : null;
    await db
      .updateTable('campaign_rows')
      .set({
        state: ok ? 'submitted' : 'failed',
        generation_id: ok && row.type !== 'text-to-speech' ? id : null,
        voiceover_id: ok && row.type === 'text-to-speech' ? id : null,
        error: ok ? null : errorOf(outcome),
        updated_at: new Date(),
      })
      .where('campaign_id', '=', row.campaign_id)
      .where('row_number', '=', row.row_number)
      .where('state', '=', 'pending')
      .execute();
  }

  return {
    async run(campaignId: string): Promise<void> {
      const campaign = await db.selectFrom('campaigns').selectAll().where('id', '=', campaignId).executeTakeFirst();
      if (!campaign || campaign.status !== 'running') return;
      const p: Principal = { teamId: campaign.team_id, keyId: campaign.api_key_id ?? '' };
      const limit = pLimit(CONCURRENCY);
      let after = 0;
      for (;;) {
        const rows = await db
          .selectFrom('campaign_rows')
          .selectAll()
          .where('campaign_id', '=', campaignId)
          .where('state', '=', 'pending')
          .where('row_number', '>', after)
          .orderBy('row_number')
          .limit(BATCH)
          .execute();
        if (!rows.length) break;
        await Promise.all(rows.map((r) => limit(() => submit(p, r))));
        after = rows.at(-1)!.row_number;
        await notifyCampaignChanged(db, campaign);
      }
      const done = await db
        .updateTable('campaigns')
        .set({ status: 'submitted', submitted_at: new Date() })
        .where('id', '=', campaignId)
        .where('status', '=', 'running')
        // Rows added while this ran get their own job from start(); leave the campaign running for it.
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('campaign_rows').select('row_number').where('campaign_id', '=', campaignId).where('state', '=', 'pending'))),
        )
        .returning('id')
        .executeTakeFirst();
      if (done) await notifyCampaignChanged(db, campaign);
      log.info({ campaign_id: campaignId, submitted: Boolean(done) }, 'campaign rows submitted');
    },
  };
}
export type CampaignRunner = ReturnType<typeof createCampaignRunner>;
