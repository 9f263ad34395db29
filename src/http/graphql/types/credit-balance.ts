import type { CreditBalance } from '../../../services/credits.ts';
import { errorTypes } from './errors.ts';
import { builder } from '../builder.ts';
import { ownerOf, principalOf, servicesFor } from '../request-context.ts';

const services = servicesFor('credits');

export const CreditBalanceRef = builder.objectRef<CreditBalance>('CreditBalance').implement({
  fields: (t) => ({
    credits_used: t.exposeInt('credits_used'),
    credits_limit: t.exposeInt('credits_limit'),
    credits_remaining: t.exposeInt('credits_remaining'),
  }),
});

builder.mutationFields((t) => ({
  topUpCredits: t.field({
    type: CreditBalanceRef,
    errors: errorTypes,
    description: "Adds credits to the current period's limit (owners, dashboard sessions, when the operator turned it on with OWNER_TOP_UP=true; at most OWNER_TOP_UP_MAX_PER_PERIOD a period)",
    args: { credits: t.arg.int({ required: true }) },
    resolve: (_r, args, ctx) => services(ctx).credits.topUp(ownerOf(ctx), { credits: args.credits }),
  }),
}));

builder.queryFields((t) => ({
  topUpAllowance: t.int({
    nullable: true,
    description: 'Credits an owner may still add this period with topUpCredits; null when top-ups are off on this server or the caller is not an owner signed in to the dashboard',
    resolve: (_r, _a, ctx) => {
      principalOf(ctx);
      return services(ctx).credits.topUpAllowance('session' in ctx.auth ? ctx.auth.session : undefined);
    },
  }),
  credits: t.field({
    type: CreditBalanceRef,
    resolve: (_r, _a, ctx) => services(ctx).credits.balance(principalOf(ctx)),
  }),
}));
