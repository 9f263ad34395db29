import { AppError } from '../../../domain/errors.ts';
import type { CreditBalance, LedgerEntry } from '../../../services/credits.ts';
import type { TeamRetention } from '../../../services/retention.ts';
import type { TeamStorageUsage } from '../../../services/storage-usage.ts';
import { errorTypes } from './errors.ts';
import { pageArgs, pageOf, pageQuery } from './paging.ts';
import { builder } from '../builder.ts';
import { ownerOf, principalOf } from '../context.ts';

const CreditBalanceRef = builder.objectRef<CreditBalance>('CreditBalance').implement({
  fields: (t) => ({
    credits_used: t.exposeInt('credits_used'),
    credits_limit: t.exposeInt('credits_limit'),
    credits_remaining: t.exposeInt('credits_remaining'),
  }),
});

const TeamRetentionRef = builder.objectRef<TeamRetention>('TeamRetention').implement({
  description: "How long the team's generated files are kept; a daily job removes older ones (the generation stays, with files_expired_at)",
  fields: (t) => ({
    days: t.exposeInt('days', { nullable: true, description: "What applies: the team's own days when set, else the server's; null = kept forever" }),
    team_days: t.exposeInt('team_days', { nullable: true, description: "The team's own setting (owners set it with setTeamRetention); null = the server's" }),
    server_days: t.exposeInt('server_days', { nullable: true, description: "The operator's RETENTION_DAYS, the most a team may set; null = unset (forever)" }),
  }),
});

// Floats: a count of bytes outgrows GraphQL's 32-bit Int at 2 GiB (a Float is exact to 2^53).
const TeamStorageRef = builder.objectRef<TeamStorageUsage>('TeamStorage').implement({
  description: "Bytes the team stores, by kind; the sum is what the tier's storage quota is checked against",
  fields: (t) => ({
    outputs_bytes: t.exposeFloat('outputs_bytes', { description: "Generations' results and voiceovers' audio" }),
    inputs_bytes: t.exposeFloat('inputs_bytes', { description: 'Input copies kept for generations, product and custom avatar images' }),
    uploads_bytes: t.exposeFloat('uploads_bytes', { description: 'Uploads (ready ones)' }),
    total_bytes: t.exposeFloat('total_bytes'),
    quota_bytes: t.exposeFloat('quota_bytes', {
      nullable: true,
      description: "The tier's storage quota (STORAGE_QUOTA_TIERS); past it uploads and new generations are refused (forbidden). null = none",
    }),
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
    retention: t.field({ type: TeamRetentionRef, resolve: (team, _a, ctx) => ctx.app.services.retention.get(team.id) }),
    storage: t.field({ type: TeamStorageRef, resolve: (team, _a, ctx) => ctx.app.services.storageUsage.get(team.id) }),
  }),
});

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

const SpendRef = builder.objectRef<{ day: string; kind: string; credits: number }>('SpendByDay').implement({
  description: 'Credits spent (debits less refunds) on one UTC day for one type of work',
  fields: (t) => ({
    day: t.exposeString('day', { description: 'YYYY-MM-DD (UTC)' }),
    kind: t.exposeString('kind', { description: "A generation's type, or voiceover / ad_library_scrape" }),
    credits: t.exposeInt('credits'),
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
      return ctx.app.services.retention.set(owner.teamId, { days: args.days }, { kind: 'user', userId: owner.userId, client: owner.client });
    },
  }),
  topUpCredits: t.field({
    type: CreditBalanceRef,
    errors: errorTypes,
    description: "Adds credits to the current period's limit (owners, dashboard sessions, when the operator turned it on with OWNER_TOP_UP=true; at most OWNER_TOP_UP_MAX_PER_PERIOD a period)",
    args: { credits: t.arg.int({ required: true }) },
    resolve: (_r, args, ctx) => ctx.app.services.credits.topUp(ownerOf(ctx), { credits: args.credits }),
  }),
}));

builder.queryFields((t) => ({
  topUpAllowance: t.int({
    nullable: true,
    description: 'Credits an owner may still add this period with topUpCredits; null when top-ups are off on this server or the caller is not an owner signed in to the dashboard',
    resolve: (_r, _a, ctx) => {
      principalOf(ctx);
      return ctx.app.services.credits.topUpAllowance('session' in ctx.auth ? ctx.auth.session : undefined);
    },
  }),
  spending: t.field({
    type: [SpendRef],
    errors: errorTypes,
    description: 'Credits spent per day and type over the last `days` days (default 30, at most 366), oldest first',
    args: { days: t.arg.int() },
    resolve: (_r, args, ctx) => ctx.app.services.credits.spending(principalOf(ctx), args.days == null ? {} : { days: args.days }),
  }),
  ledger: t.field({
    type: pageOf<LedgerEntry>('LedgerPage', LedgerLineRef),
    errors: errorTypes,
    description: "The team's credit ledger, newest first (the same as GET /account/ledger)",
    args: { ...pageArgs(t), generation_id: t.arg.id(), kind: t.arg.string(), since: t.arg.string(), until: t.arg.string() },
    resolve: (_r, args, ctx) =>
      ctx.app.services.credits.ledger(principalOf(ctx), {
        ...pageQuery(args),
        ...(args.generation_id != null ? { generation_id: String(args.generation_id) } : {}),
        ...(args.kind != null ? { kind: args.kind } : {}),
        ...(args.since != null ? { since: args.since } : {}),
        ...(args.until != null ? { until: args.until } : {}),
      }),
  }),
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
