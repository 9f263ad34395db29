import { AUDIT_ACTIONS } from '../../../domain/audit-actions.ts';
import type { AuditLine } from '../../../services/audit.ts';
import { builder } from '../builder.ts';
import { ownerOf, servicesFor } from '../request-context.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';

const services = servicesFor('audit');

const AuditActorRef = builder.objectRef<AuditLine['actor']>('AuditActor').implement({
  description: 'Who made a change, as they were named at the time: a person of the team, an API key, or the operator at the CLI',
  fields: (t) => ({
    kind: t.exposeString('kind', { description: 'user, api_key or operator' }),
    user_id: t.exposeID('user_id', { nullable: true }),
    email: t.exposeString('email', { nullable: true, description: "The person's email when the line was written" }),
    key_id: t.exposeID('key_id', { nullable: true }),
    key_hint: t.exposeString('key_hint', { nullable: true, description: "The key's first and last characters, never the key" }),
    key_name: t.exposeString('key_name', { nullable: true }),
    name: t.exposeString('name', { nullable: true, description: 'The operator: the CLI and the login that ran it' }),
  }),
});

const AuditLineRef = builder.objectRef<AuditLine>('AuditLine').implement({
  description: "A line of the team's audit log: who changed the team's access or money, what, when and from where",
  fields: (t) => ({
    id: t.exposeID('id'),
    action: t.exposeString('action', { description: `What was done, as area.event; the list is closed: ${AUDIT_ACTIONS.join(', ')}` }),
    detail: t.field({ type: 'JSON', description: 'What changed (ids, names, before and after); never a secret', resolve: (l) => l.detail }),
    actor: t.field({ type: AuditActorRef, resolve: (l) => l.actor }),
    ip: t.exposeString('ip', { nullable: true, description: 'The client address (behind TRUST_PROXY, the forwarded one); null outside a request' }),
    user_agent: t.exposeString('user_agent', { nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

const AuditLinePageRef = pageOf<AuditLine>('AuditLinePage', AuditLineRef);

builder.queryFields((t) => ({
  auditLog: t.field({
    type: AuditLinePageRef,
    description: "The team's audit log, newest first (owners; dashboard sessions only). Kept AUDIT_RETENTION_DAYS (400 by default)",
    args: {
      ...pageArgs(t),
      action: t.arg.string({ description: 'Only this action' }),
      actor_kind: t.arg.string({ description: 'user, api_key or operator' }),
      actor_id: t.arg.id({ description: "Only this person's or this key's lines" }),
      since: t.arg.string({ description: 'Lines written at or after this instant (ISO 8601)' }),
      until: t.arg.string({ description: 'Lines written before this instant (ISO 8601)' }),
    },
    resolve: (_r, args, ctx) =>
      services(ctx).audit.forOwner(ownerOf(ctx), {
        ...pageQuery(args),
        ...(args.action != null ? { action: args.action } : {}),
        ...(args.actor_kind != null ? { actor_kind: args.actor_kind } : {}),
        ...(args.actor_id != null ? { actor_id: String(args.actor_id) } : {}),
        ...(args.since != null ? { since: args.since } : {}),
        ...(args.until != null ? { until: args.until } : {}),
      }),
  }),
}));
