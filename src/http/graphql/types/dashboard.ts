import { builder } from '../builder.ts';
import { ownerOf, servicesFor, sessionOf } from '../request-context.ts';
import type { MemberView, SignInLink } from '../../../services/members.ts';
import type { SessionView } from '../../../services/sessions.ts';
import type { TeamKeyView } from '../../../services/team-keys.ts';
import { errorTypes } from './errors.ts';
import { WebhookDeliveryRef } from './generation.ts';
import { pageArgs, pageQuery } from './page-type.ts';
import { WebhookDeliveryPageRef } from './webhooks.ts';

const services = servicesFor('teamKeys', 'webhooks', 'members');

// The dashboard's own part of the schema: a signed-in person's view of their team, its keys and
// its members. An API key is refused here (forbidden): two doors, two credentials.

const RoleEnum = builder.enumType('Role', { values: ['owner', 'member'] as const, description: 'owner: manages keys, webhooks, members and credits; member: creates and views' });

const ViewerRef = builder.objectRef<SessionView>('Viewer').implement({
  description: 'The signed-in person, their team and the CSRF token their requests carry',
  fields: (t) => ({
    user_id: t.string({ resolve: (v) => v.user.id }),
    email: t.string({ resolve: (v) => v.user.email }),
    role: t.field({ type: RoleEnum, resolve: (v) => v.user.role }),
    team_id: t.string({ resolve: (v) => v.team.id }),
    team_name: t.string({ resolve: (v) => v.team.name }),
    tier: t.string({ resolve: (v) => v.team.tier }),
  }),
});

const ApiKeyRef = builder.objectRef<TeamKeyView>('ApiKey').implement({
  description: "One of the team's API keys as Settings > API Keys lists it: never the key itself",
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    hint: t.exposeString('hint', { description: 'The first and last characters of the key' }),
    webhook_url: t.exposeString('webhook_url', { nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    last_used_at: t.expose('last_used_at', { type: 'DateTime', nullable: true }),
    revoked_at: t.expose('revoked_at', { type: 'DateTime', nullable: true }),
  }),
});

const CreatedApiKeyRef = builder.objectRef<TeamKeyView & { key: string; webhook_secret: string }>('CreatedApiKey').implement({
  description: 'A new key: `key` and `webhook_secret` are shown this once',
  fields: (t) => ({
    api_key: t.field({ type: ApiKeyRef, resolve: (k) => k }),
    key: t.exposeString('key'),
    webhook_secret: t.exposeString('webhook_secret'),
  }),
});

const RotatedSecretRef = builder.objectRef<TeamKeyView & { webhook_secret: string }>('RotatedWebhookSecret').implement({
  description: 'The new webhook secret, shown this once; the old one stops verifying at once',
  fields: (t) => ({
    api_key: t.field({ type: ApiKeyRef, resolve: (k) => k }),
    webhook_secret: t.exposeString('webhook_secret'),
  }),
});

const MemberRef = builder.objectRef<MemberView>('Member').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    role: t.field({ type: RoleEnum, resolve: (m) => m.role }),
    active: t.exposeBoolean('active', { description: 'False until they followed their link and chose a password' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

const SignInLinkRef = builder.objectRef<SignInLink>('SignInLink').implement({
  description: 'A one-time link that lets a person in and has them choose a password; shown this once',
  fields: (t) => ({
    member: t.field({ type: MemberRef, resolve: (l) => l.user }),
    url: t.exposeString('url'),
    expires_at: t.expose('expires_at', { type: 'DateTime' }),
  }),
});

builder.queryFields((t) => ({
  viewer: t.field({
    type: ViewerRef,
    description: 'Who is signed in (dashboard sessions only)',
    resolve: (_r, _a, ctx) => sessionOf(ctx).view,
  }),
  apiKeys: t.field({
    type: [ApiKeyRef],
    description: "The team's API keys, newest first, revoked ones included (owners)",
    resolve: (_r, _a, ctx) => services(ctx).teamKeys.list(ownerOf(ctx)),
  }),
  apiKeyDeliveries: t.field({
    type: WebhookDeliveryPageRef,
    description: "A key's webhook attempts, newest first (owners)",
    args: { key_id: t.arg.id({ required: true }), ...pageArgs(t), generation_id: t.arg.id(), outcome: t.arg.string({ description: 'succeeded or failed' }) },
    resolve: async (_r, args, ctx) =>
      services(ctx).webhooks.list(await services(ctx).teamKeys.asKey(ownerOf(ctx), String(args.key_id)), {
        ...pageQuery(args),
        ...(args.generation_id != null ? { generation_id: String(args.generation_id) } : {}),
        ...(args.outcome != null ? { outcome: args.outcome } : {}),
      }),
  }),
  members: t.field({
    type: [MemberRef],
    description: "The team's people (any signed-in member sees who is in the team)",
    resolve: (_r, _a, ctx) => services(ctx).members.list(sessionOf(ctx)),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKeyRef,
    errors: errorTypes,
    args: { name: t.arg.string(), webhook_url: t.arg.string() },
    resolve: (_r, args, ctx) => services(ctx).teamKeys.create(ownerOf(ctx), { name: args.name ?? '', webhook_url: args.webhook_url ?? null }),
  }),
  renameApiKey: t.field({
    type: ApiKeyRef,
    errors: errorTypes,
    args: { id: t.arg.id({ required: true }), name: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => services(ctx).teamKeys.rename(ownerOf(ctx), String(args.id), { name: args.name }),
  }),
  revokeApiKey: t.field({
    type: ApiKeyRef,
    errors: errorTypes,
    description: 'At once and on every node: the key answers 401 from then on',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => services(ctx).teamKeys.revoke(ownerOf(ctx), String(args.id)),
  }),
  setApiKeyWebhook: t.field({
    type: ApiKeyRef,
    errors: errorTypes,
    description: 'Sets (or with null clears) where this key\'s webhooks go',
    args: { id: t.arg.id({ required: true }), url: t.arg.string() },
    resolve: (_r, args, ctx) => services(ctx).teamKeys.setWebhook(ownerOf(ctx), String(args.id), args.url ?? null),
  }),
  rotateApiKeyWebhookSecret: t.field({
    type: RotatedSecretRef,
    errors: errorTypes,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => services(ctx).teamKeys.rotateWebhookSecret(ownerOf(ctx), String(args.id)),
  }),
  sendApiKeyTestWebhook: t.field({
    type: WebhookDeliveryRef,
    errors: errorTypes,
    description: "A signed webhook.test event to this key's webhook URL",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_r, args, ctx) => services(ctx).webhooks.sendTest(await services(ctx).teamKeys.asKey(ownerOf(ctx), String(args.id))),
  }),
  redeliverApiKeyWebhook: t.field({
    type: WebhookDeliveryRef,
    errors: errorTypes,
    args: { key_id: t.arg.id({ required: true }), delivery_id: t.arg.id({ required: true }) },
    resolve: async (_r, args, ctx) =>
      services(ctx).webhooks.redeliver(await services(ctx).teamKeys.asKey(ownerOf(ctx), String(args.key_id)), String(args.delivery_id)),
  }),
  inviteMember: t.field({
    type: SignInLinkRef,
    errors: errorTypes,
    description: 'A person of the team and their one-time link (no mail is sent: pass the link on)',
    args: { email: t.arg.string({ required: true }), role: t.arg({ type: RoleEnum, required: true }) },
    resolve: (_r, args, ctx) => services(ctx).members.invite(ownerOf(ctx), { email: args.email, role: args.role }),
  }),
  setMemberRole: t.field({
    type: MemberRef,
    errors: errorTypes,
    args: { id: t.arg.id({ required: true }), role: t.arg({ type: RoleEnum, required: true }) },
    resolve: (_r, args, ctx) => services(ctx).members.setRole(ownerOf(ctx), String(args.id), { role: args.role }),
  }),
  removeMember: t.field({
    type: MemberRef,
    errors: errorTypes,
    description: 'The person and every session of theirs',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => services(ctx).members.remove(ownerOf(ctx), String(args.id)),
  }),
}));
