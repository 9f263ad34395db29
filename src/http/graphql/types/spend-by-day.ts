import { errorTypes } from './errors.ts';
import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';

const services = servicesFor('credits');

const SpendRef = builder.objectRef<{ day: string; kind: string; credits: number }>('SpendByDay').implement({
  description: 'Credits spent (debits less refunds) on one UTC day for one type of work',
  fields: (t) => ({
    day: t.exposeString('day', { description: 'YYYY-MM-DD (UTC)' }),
    kind: t.exposeString('kind', { description: "A generation's type, or voiceover / ad_library_scrape" }),
    credits: t.exposeInt('credits'),
  }),
});

builder.queryFields((t) => ({
  spending: t.field({
    type: [SpendRef],
    errors: errorTypes,
    description: 'Credits spent per day and type over the last `days` days (default 30, at most 366), oldest first',
    args: { days: t.arg.int() },
    resolve: (_r, args, ctx) => services(ctx).credits.spending(principalOf(ctx), args.days == null ? {} : { days: args.days }),
  }),
}));
