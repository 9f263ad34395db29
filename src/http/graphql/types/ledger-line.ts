import type { LedgerEntry } from '../../../services/credits.ts';
import { errorTypes } from './errors.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';
import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';

const services = servicesFor('credits');

const LedgerLineRef = builder.objectRef<LedgerEntry>('LedgerLine').implement({
  description: 'A line of the credit ledger, with the credits used after it',
  fields: (t) => ({
    id: t.exposeID('id'),
    kind: t.exposeString('kind'),
    amount: t.exposeInt('amount'),
    generation_id: t.exposeID('generation_id', { nullable: true }),
    subject_type: t.exposeString('subject_type', { nullable: true }),
    subject_id: t.exposeID('subject_id', { nullable: true }),
    note: t.exposeString('note', { nullable: true }),
    created_at: t.exposeString('created_at'),
    credits_used_after: t.exposeInt('credits_used_after'),
  }),
});

builder.queryFields((t) => ({
  ledger: t.field({
    type: pageOf<LedgerEntry>('LedgerPage', LedgerLineRef),
    errors: errorTypes,
    description: "The team's credit ledger, newest first (the same as GET /account/ledger)",
    args: { ...pageArgs(t), generation_id: t.arg.id(), kind: t.arg.string(), since: t.arg.string(), until: t.arg.string() },
    resolve: (_r, args, ctx) =>
      services(ctx).credits.ledger(principalOf(ctx), {
        ...pageQuery(args),
        ...(args.generation_id != null ? { generation_id: String(args.generation_id) } : {}),
        ...(args.kind != null ? { kind: args.kind } : {}),
        ...(args.since != null ? { since: args.since } : {}),
        ...(args.until != null ? { until: args.until } : {}),
      }),
  }),
}));
