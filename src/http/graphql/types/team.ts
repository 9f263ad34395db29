import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';
import { CreditBalanceRef } from './credit-balance.ts';
import { TeamRetentionRef } from './team-retention.ts';
import { TeamStorageRef } from './team-storage.ts';

const services = servicesFor('retention', 'storageUsage', 'teams');

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
    retention: t.field({ type: TeamRetentionRef, resolve: (team, _a, ctx) => services(ctx).retention.get(team.id) }),
    storage: t.field({ type: TeamStorageRef, resolve: (team, _a, ctx) => services(ctx).storageUsage.get(team.id) }),
  }),
});

builder.queryFields((t) => ({
  team: t.field({
    type: TeamRef,
    description: "The calling key's team",
    resolve: (_r, _a, ctx) => services(ctx).teams.getTeam(principalOf(ctx).teamId),
  }),
}));
