import { campaignTicks } from '../../../events/campaign-events.ts';
import type { CampaignCounts } from '../../../repositories/campaigns.ts';
import type { Campaign, CampaignRowView } from '../../../services/campaigns/campaigns.ts';
import type { CheckedRow } from '../../../services/campaigns/check.ts';
import { builder } from '../builder.ts';
import { liveSubscription, principalOf, servicesFor } from '../request-context.ts';
import { errorTypes } from './errors.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';
import { notFoundAsNull } from './visibility.ts';

const services = servicesFor('campaigns');

const CampaignCountsRef = builder.objectRef<CampaignCounts>('CampaignCounts').implement({
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'Rows stored' }),
    pending: t.exposeInt('pending', { description: 'Rows not submitted yet' }),
    submitted: t.exposeInt('submitted', { description: 'Rows whose create was made (or refused)' }),
    processing: t.exposeInt('processing'),
    completed: t.exposeInt('completed'),
    failed: t.exposeInt('failed', { description: 'Refused at create, or their generation failed' }),
    credits_estimate: t.exposeInt('credits_estimate', { description: 'The price of every row, as checked' }),
    credits_spent: t.exposeInt('credits_spent', { description: 'Charged and not refunded' }),
  }),
});

const CampaignRowRef = builder.objectRef<CampaignRowView>('CampaignRow').implement({
  fields: (t) => ({
    row_number: t.exposeInt('row_number', { description: 'The row as a spreadsheet numbers it: the header is row 1, the first data row 2' }),
    row_key: t.exposeString('row_key', { nullable: true }),
    type: t.exposeString('type'),
    status: t.exposeString('status', { description: 'pending, processing, completed, failed, or deleted (its generation was deleted after it ended; generation_id still names it)' }),
    credits: t.exposeInt('credits', { description: 'Charged for this row (0 once failed and refunded)' }),
    generation_id: t.exposeID('generation_id', { nullable: true }),
    voiceover_id: t.exposeID('voiceover_id', { nullable: true }),
    result_url: t.exposeString('result_url', { nullable: true, description: 'Signed link to the first output, valid 1 hour' }),
    error: t.exposeString('error', { nullable: true }),
  }),
});
const CampaignRowPage = pageOf<CampaignRowView>('CampaignRowPage', CampaignRowRef);

export const CampaignRef = builder.objectRef<Campaign>('Campaign').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    status: t.exposeString('status', { description: 'draft (rows being added), running (rows being submitted), submitted' }),
    finished: t.exposeBoolean('finished', { description: 'Every row submitted and no generation still processing' }),
    counts: t.field({ type: CampaignCountsRef, resolve: (c) => c.counts }),
    created_at: t.field({ type: 'DateTime', resolve: (c) => c.created_at }),
    started_at: t.field({ type: 'DateTime', nullable: true, resolve: (c) => c.started_at }),
    submitted_at: t.field({ type: 'DateTime', nullable: true, resolve: (c) => c.submitted_at }),
    rows: t.field({
      type: CampaignRowPage,
      args: pageArgs(t),
      resolve: (c, args, ctx) => services(ctx).campaigns.rows(principalOf(ctx), c.id, pageQuery(args)),
    }),
  }),
});

const RowProblemRef = builder.objectRef<{ field: string; message: string }>('CampaignRowProblem').implement({
  fields: (t) => ({ field: t.exposeString('field'), message: t.exposeString('message') }),
});

const CheckedRowRef = builder.objectRef<CheckedRow>('CheckedCampaignRow').implement({
  description: 'A row checked by the rules of its endpoint and priced, without being stored',
  fields: (t) => ({
    row_number: t.exposeInt('row_number'),
    ok: t.exposeBoolean('ok'),
    type: t.exposeString('type', { nullable: true }),
    row_key: t.exposeString('row_key', { nullable: true }),
    credits: t.int({ nullable: true, resolve: (r) => (r.ok ? r.credits : null) }),
    problems: t.field({ type: [RowProblemRef], resolve: (r) => (r.ok ? [] : r.problems) }),
  }),
});

const AddedRowsRef = builder.objectRef<{ stored: number; kept: number; changed: number }>('AddedCampaignRows').implement({
  fields: (t) => ({
    stored: t.exposeInt('stored', { description: 'Rows written (new, or pending rows updated)' }),
    kept: t.exposeInt('kept', { description: 'Rows already submitted by an earlier run, left as they were' }),
    changed: t.exposeInt('changed', { description: 'Kept rows whose cells differ from what was submitted (another file under the same name?)' }),
  }),
});

const CampaignRowInput = builder.inputType('CampaignRowInput', {
  fields: (t) => ({
    row_number: t.int({ required: true }),
    cells: t.field({ type: 'JSON', required: true, description: 'Column name -> cell text, as in the file' }),
  }),
});

type RowArg = { row_number: number; cells?: unknown };
const rowsOf = (rows: readonly RowArg[]) => rows.map((r) => ({ row_number: r.row_number, cells: r.cells as Record<string, string> }));

builder.queryFields((t) => ({
  campaign: t.field({
    type: CampaignRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => notFoundAsNull(() => services(ctx).campaigns.get(principalOf(ctx), String(id))),
  }),
  checkCampaignRows: t.field({
    type: [CheckedRowRef],
    description: 'Checks and prices rows exactly as their endpoints would; stores nothing, charges nothing (at most 500 per call)',
    args: { rows: t.arg({ type: [CampaignRowInput], required: true }) },
    resolve: (_r, { rows }, ctx) => services(ctx).campaigns.check(principalOf(ctx), rowsOf(rows)),
  }),
}));

builder.mutationFields((t) => ({
  openCampaign: t.field({
    type: CampaignRef,
    errors: errorTypes,
    description: "The team's campaign of this name, made if new: the same name continues the same campaign",
    args: { name: t.arg.string({ required: true }) },
    resolve: (_r, { name }, ctx) => services(ctx).campaigns.open(principalOf(ctx), name),
  }),
  addCampaignRows: t.field({
    type: AddedRowsRef,
    errors: errorTypes,
    description: 'Stores rows (at most 500 per call); any invalid row refuses the whole call; submitted rows are kept as they are',
    args: { campaign_id: t.arg.id({ required: true }), rows: t.arg({ type: [CampaignRowInput], required: true }) },
    resolve: (_r, { campaign_id, rows }, ctx) => services(ctx).campaigns.addRows(principalOf(ctx), String(campaign_id), rowsOf(rows)),
  }),
  startCampaign: t.field({
    type: CampaignRef,
    errors: errorTypes,
    description: 'Submits the pending rows in the background; refused (insufficient_credits) when the balance cannot pay for all of them',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => services(ctx).campaigns.start(principalOf(ctx), String(id)),
  }),
}));

builder.subscriptionFields((t) => ({
  campaignUpdated: t.field({
    type: CampaignRef,
    description: 'The campaign now, then whenever its counts change; ends once it has finished',
    args: { id: t.arg.id({ required: true }) },
    subscribe: (_r, { id }, ctx) =>
      liveSubscription(ctx, (onEnd) => (async function* () {
        const p = principalOf(ctx);
        let current = await services(ctx).campaigns.get(p, String(id));
        const ticks = campaignTicks(ctx.events, { teamId: p.teamId, campaignId: current.id });
        onEnd(() => ticks.close());
        try {
          await ticks.ready;
          current = await services(ctx).campaigns.get(p, current.id);
          yield current;
          while (!current.finished && (await ticks.next())) {
            const next = await services(ctx).campaigns.get(p, current.id);
            if (JSON.stringify(next) !== JSON.stringify(current)) yield next;
            current = next;
          }
        } finally {
          await ticks.close();
        }
      })()),
    resolve: (c: Campaign) => c,
  }),
}));
