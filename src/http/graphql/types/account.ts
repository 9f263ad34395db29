import type { CreditBalance } from '../../../services/credits.ts';
import { builder } from '../builder.ts';
import { principalOf } from '../context.ts';

const CreditBalanceRef = builder.objectRef<CreditBalance>('CreditBalance').implement({
  fields: (t) => ({
    credits_used: t.exposeInt('credits_used'),
    credits_limit: t.exposeInt('credits_limit'),
    credits_remaining: t.exposeInt('credits_remaining'),
  }),
});

const TeamRef = builder.objectRef<{ id: string; name: string; tier: string; credits_used: number; credits_limit: number }>('Team').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    tier: t.exposeString('tier'),
    credits: t.field({
      type: CreditBalanceRef,
      resolve: (team) => ({
        credits_used: team.credits_used,
        credits_limit: team.credits_limit,
        credits_remaining: team.credits_limit - team.credits_used,
      }),
    }),
  }),
});

builder.queryFields((t) => ({
  team: t.field({
    type: TeamRef,
    description: "The calling key's team",
    resolve: (_r, _a, ctx) => ctx.app.services.teams.getTeam(principalOf(ctx).teamId),
  }),
  credits: t.field({
    type: CreditBalanceRef,
    resolve: (_r, _a, ctx) => ctx.app.services.credits.balance(principalOf(ctx)),
  }),
}));
