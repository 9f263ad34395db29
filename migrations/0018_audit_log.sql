-- Who changed a team's access or money: one line per change, written in the change's transaction.
-- Lines name people and keys as they were at the time (email, hint, name), not by foreign key, so
-- a removed member or a deleted team still leaves its lines until the retention purge.
create table audit_log (
  id bigint generated always as identity primary key,
  team_id uuid not null,
  action text not null check (action in (
    'api_key.created', 'api_key.renamed', 'api_key.revoked', 'api_key.rate_limit_set',
    'webhook.url_changed', 'webhook.secret_rotated',
    'member.invited', 'member.link_issued', 'member.role_changed', 'member.removed',
    'session.signed_in', 'session.signed_out',
    'credits.topped_up', 'credits.limit_set', 'credits.period_reset',
    'retention.changed', 'generations.bulk_deleted',
    'team.export_started', 'team.deletion_started'
  )),
  detail jsonb not null default '{}' check (jsonb_typeof(detail) = 'object' and length(detail::text) <= 8000),
  actor_kind text not null check (actor_kind in ('user', 'api_key', 'operator')),
  actor_user_id uuid,
  actor_email text,
  actor_key_id uuid,
  actor_key_hint text,
  actor_key_name text,
  actor_name text,
  ip text,
  user_agent text check (length(user_agent) <= 512),
  created_at timestamptz not null default now(),
  check ((actor_kind = 'user') = (actor_user_id is not null)),
  check ((actor_kind = 'api_key') = (actor_key_id is not null))
);
create index audit_log_team on audit_log (team_id, created_at desc, id desc);
create index audit_log_created on audit_log (created_at);

-- Append-only below the service too: no UPDATE ever, no DELETE or TRUNCATE but through
-- audit_log_purge(), which marks its own transaction. A guard against a stray code path, not
-- against the database's owner, who can drop the trigger.
create function audit_log_refuse_change() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('adforge.audit_purge', true) = 'on' then
    return old;
  end if;
  raise exception 'audit_log is append-only (% refused)', tg_op using errcode = 'insufficient_privilege';
end $$;

create trigger audit_log_append_only before update or delete on audit_log
  for each row execute function audit_log_refuse_change();
create trigger audit_log_no_truncate before truncate on audit_log
  for each statement execute function audit_log_refuse_change();

create function audit_log_purge(older_than timestamptz) returns bigint language plpgsql as $$
declare
  n bigint;
begin
  perform set_config('adforge.audit_purge', 'on', true);
  delete from audit_log where created_at < older_than;
  get diagnostics n = row_count;
  perform set_config('adforge.audit_purge', 'off', true);
  return n;
end $$;
