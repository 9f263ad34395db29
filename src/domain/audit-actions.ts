/**
 * What the audit log records: a closed list (the table's check constraint holds the same). Pure,
 * so that the dashboard's filter offers exactly the server's actions.
 */
export const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.renamed',
  'api_key.revoked',
  'api_key.rate_limit_set',
  'webhook.url_changed',
  'webhook.secret_rotated',
  'member.invited',
  'member.link_issued',
  'member.role_changed',
  'member.removed',
  'session.signed_in',
  'session.signed_out',
  'credits.topped_up',
  'credits.limit_set',
  'credits.period_reset',
  'retention.changed',
  'generations.bulk_deleted',
  'team.export_started',
  'team.deletion_started',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
