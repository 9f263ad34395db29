import os from 'node:os';
import { z } from 'zod';
import { AppError } from '../domain/errors.ts';
import { canManage } from '../domain/dashboard-users.ts';
import { pageQuery, uuid } from '../domain/inputs.ts';
import { parseInput } from '../domain/validate.ts';
import type { Db } from '../db/pool.ts';
import { insertAuditLine, listAuditLines, purgeAuditLines, type AuditRow } from '../repositories/audit-log.ts';
import { findTeam } from '../repositories/teams.ts';
import type { Deps } from './deps.ts';
import type { ClientInfo } from './principal.ts';
import { paginated, type Paginated } from './paginated.ts';
import { requireUuid } from './ids.ts';

import { AUDIT_ACTIONS, type AuditAction } from '../domain/audit-actions.ts';
export { AUDIT_ACTIONS, type AuditAction };

export const ACTOR_KINDS = ['user', 'api_key', 'operator'] as const;

/** Who made a change: a signed-in person, an API key, or the operator at the CLI. */
export type AuditActor = ({ kind: 'user'; userId: string } | { kind: 'api_key'; keyId: string } | { kind: 'operator'; name?: string }) & { client?: ClientInfo | undefined };

/** The operator at this machine's `adforge` command, named by their login. */
export function operatorActor(): AuditActor {
  let login = '';
  try {
    login = os.userInfo().username;
  } catch {
    // No passwd entry for this uid (a container's arbitrary user): the CLI alone names it.
  }
  return { kind: 'operator', name: login ? `adforge CLI (${login})` : 'adforge CLI' };
}

/** A caller of a team-scoped service: its key when it came with one, else its person. */
export function actorOf(p: { keyId?: string | null; userId?: string | undefined; client?: ClientInfo | undefined }): AuditActor {
  if (p.keyId) return { kind: 'api_key', keyId: p.keyId, client: p.client };
  if (p.userId) return { kind: 'user', userId: p.userId, client: p.client };
  return operatorActor();
}

/** A webhook URL as a line keeps it: without a user, password or query, where receivers put tokens. */
export function webhookUrlForAudit(url: string | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    const hidden = u.search || u.username || u.password ? '?…' : '';
    return `${u.protocol}//${u.host}${u.pathname}${hidden}`;
  } catch {
    return null;
  }
}

const SECRET_NAME = /secret|password|token|^key$/i;
const SECRET_VALUE = /^service_sk_[0-9A-Za-z]{20,}$|^whsec_/;

/** Details are small and never carry a secret, whatever a caller passes. */
function cleanDetail(detail: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(detail)) {
    if (v === undefined || SECRET_NAME.test(k) || (typeof v === 'string' && SECRET_VALUE.test(v))) continue;
    out[k] = typeof v === 'string' && v.length > 500 ? `${v.slice(0, 500)}…` : v;
  }
  return out;
}

/**
 * Writes one line of a team's audit log. Pass the transaction of the change it records, so the
 * line and the change commit together or not at all.
 */
export async function recordAudit(db: Db, teamId: string, actor: AuditActor, action: AuditAction, detail: Record<string, unknown> = {}): Promise<void> {
  await insertAuditLine(db, {
    team_id: teamId,
    action,
    detail: cleanDetail(detail),
    actor_kind: actor.kind,
    actor_user_id: actor.kind === 'user' ? actor.userId : null,
    actor_key_id: actor.kind === 'api_key' ? actor.keyId : null,
    actor_name: actor.kind === 'operator' ? (actor.name ?? 'adforge CLI') : null,
    ip: actor.client?.ip || null,
    user_agent: actor.client?.user_agent ? actor.client.user_agent.slice(0, 512) : null,
  });
}

const instant = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-11-01T00:00:00Z' })
  .refine((s) => s.length <= 64, 'must be at most 64 characters')
  .transform((s) => new Date(s));

export const auditQuery = pageQuery.extend({
  action: z.enum(AUDIT_ACTIONS, { message: `must be one of ${AUDIT_ACTIONS.join(', ')}` }).optional(),
  actor_kind: z.enum(ACTOR_KINDS, { message: 'must be user, api_key or operator' }).optional(),
  actor_id: uuid.optional(),
  since: instant.optional(),
  until: instant.optional(),
});

/** A line as GraphQL and the CLI show it. */
export interface AuditLine {
  id: string;
  action: string;
  detail: Record<string, unknown>;
  actor: { kind: 'user' | 'api_key' | 'operator'; user_id: string | null; email: string | null; key_id: string | null; key_hint: string | null; key_name: string | null; name: string | null };
  ip: string | null;
  user_agent: string | null;
  created_at: string;
}

const lineView = (r: AuditRow): AuditLine => ({
  id: r.id,
  action: r.action,
  detail: r.detail,
  actor: { kind: r.actor_kind, user_id: r.actor_user_id, email: r.actor_email, key_id: r.actor_key_id, key_hint: r.actor_key_hint, key_name: r.actor_key_name, name: r.actor_name },
  ip: r.ip,
  user_agent: r.user_agent,
  created_at: r.created_at.toISOString(),
});

/** Reading the log (owners of the team; the operator for any team) and its daily purge. */
export function createAuditService({ db, config }: Pick<Deps, 'db'> & { config: Pick<Deps['config'], 'auditRetentionDays'> }) {
  async function list(teamId: string, query: unknown): Promise<Paginated<AuditLine>> {
    const q = parseInput(auditQuery, query ?? {});
    const { rows, total } = await listAuditLines(db, teamId, { action: q.action, actorKind: q.actor_kind, actorId: q.actor_id, since: q.since, until: q.until }, q);
    return paginated(rows.map(lineView), total, q);
  }
  return {
    /** Settings > Audit log: a team's owners only, their own team only. */
    async forOwner(actor: { teamId: string; role: string }, query: unknown): Promise<Paginated<AuditLine>> {
      if (!canManage(actor.role as 'owner' | 'member')) throw new AppError('forbidden', 'Only a team owner can read the audit log');
      return list(actor.teamId, query);
    },

    /** `adforge audit --team ID`. */
    async forOperator(teamId: string, query: unknown): Promise<Paginated<AuditLine>> {
      const id = requireUuid(teamId, 'team');
      const page = await list(id, query);
      // A deleted team's lines stay readable until the purge; an id that never had any is a mistake.
      if (page.pagination.total === 0 && !(await findTeam(db, id))) throw new AppError('not_found', 'Team not found');
      return page;
    },

    /** The daily job: lines older than AUDIT_RETENTION_DAYS go. */
    purge: (now = new Date()): Promise<number> => purgeAuditLines(db, new Date(now.getTime() - config.auditRetentionDays * 86_400_000)),
  };
}
