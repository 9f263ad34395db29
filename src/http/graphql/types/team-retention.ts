import { AppError } from '../../../domain/errors.ts';
import type { TeamRetention } from '../../../services/retention.ts';
import { errorTypes } from './errors.ts';
import { builder } from '../builder.ts';
import { ownerOf, servicesFor } from '../request-context.ts';

const services = servicesFor('retention');

export const TeamRetentionRef = builder.objectRef<TeamRetention>('TeamRetention').implement({
  description: "How long the team's generated files are kept; a daily job removes older ones (the generation stays, with files_expired_at)",
  fields: (t) => ({
    days: t.exposeInt('days', { nullable: true, description: "What applies: the team's own days when set, else the server's; null = kept forever" }),
    team_days: t.exposeInt('team_days', { nullable: true, description: "The team's own setting (owners set it with setTeamRetention); null = the server's" }),
    server_days: t.exposeInt('server_days', { nullable: true, description: "The operator's RETENTION_DAYS, the most a team may set; null = unset (forever)" }),
  }),
});

builder.mutationFields((t) => ({
  setTeamRetention: t.field({
    type: TeamRetentionRef,
    errors: errorTypes,
    description: "Keeps the team's generated files `days` days (owners, dashboard sessions): at most the server's RETENTION_DAYS when it is set; `days: null` uses the server's again",
    args: { days: t.arg.int({ description: 'from 1 to 36500, or null for the server\'s' }) },
    resolve: (_r, args, ctx) => {
      const owner = ownerOf(ctx);
      if (args.days === undefined) throw new AppError('validation_error', "days: give a number of days, or null for the server's retention");
      return services(ctx).retention.set(owner.teamId, { days: args.days }, { kind: 'user', userId: owner.userId, client: owner.client });
    },
  }),
}));
