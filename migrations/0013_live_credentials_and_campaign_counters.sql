-- Sessions that end (sign-out, sign-out everywhere, a removed member, a new password, expiry pruned)
-- tell every API node, so subscriptions opened with them end too. The notice commits with the
-- deletion, whichever code path deleted; it carries the user only, never the session's digest.

create function notify_sessions_ended() returns trigger language plpgsql as $$
begin
  perform pg_notify('adforge_session_ends', json_build_object('user_id', user_id)::text)
  from (select distinct user_id from ended) u;
  return null;
end $$;

create trigger sessions_ended after delete on sessions
  referencing old table as ended for each statement execute function notify_sessions_ended();

-- A campaign's progress as counters kept as its rows change, instead of an aggregate over every row
-- and its generation at each read. A row carries its generation's status and credits (kept by a
-- trigger on generations), so a row's share of the counts depends on the row alone.

alter table campaign_rows add column generation_status text, add column generation_credits integer;

update campaign_rows r set generation_status = g.status, generation_credits = g.credits
from generations g where g.id = r.generation_id;

create table campaign_counters (
  campaign_id uuid primary key references campaigns (id) on delete cascade,
  total integer not null default 0,
  pending integer not null default 0,
  submitted integer not null default 0,
  processing integer not null default 0,
  completed integer not null default 0,
  failed integer not null default 0,
  credits_estimate bigint not null default 0,
  credits_spent bigint not null default 0
);

insert into campaign_counters (campaign_id, total, pending, submitted, processing, completed, failed, credits_estimate, credits_spent)
select c.id,
  count(r.row_number),
  count(*) filter (where r.state = 'pending'),
  count(*) filter (where r.state <> 'pending'),
  count(*) filter (where r.state = 'submitted' and r.generation_status = 'processing'),
  count(*) filter (where r.state = 'submitted' and (r.generation_status = 'completed' or r.voiceover_id is not null)),
  count(*) filter (where r.state = 'failed' or r.generation_status = 'failed'),
  coalesce(sum(r.credits), 0),
  coalesce(sum(case when r.generation_status in ('processing', 'completed') then r.generation_credits
                    when r.state = 'submitted' and r.voiceover_id is not null then r.credits end), 0)
from campaigns c left join campaign_rows r on r.campaign_id = c.id
group by c.id;

create function campaign_counters_open() returns trigger language plpgsql as $$
begin
  insert into campaign_counters (campaign_id) values (new.id);
  return null;
end $$;

create trigger campaigns_counters after insert on campaigns
  for each row execute function campaign_counters_open();

-- The generation is read under a share lock: a worker ending it at the same moment either commits
-- first (and its status is read here) or waits for this row (and its update below then finds it).
create function campaign_row_generation() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.generation_id is distinct from old.generation_id then
    new.generation_status := null;
    new.generation_credits := null;
    if new.generation_id is not null then
      select g.status, g.credits into new.generation_status, new.generation_credits
      from generations g where g.id = new.generation_id for share;
    end if;
  end if;
  return new;
end $$;

create trigger campaign_rows_generation before insert or update of generation_id on campaign_rows
  for each row execute function campaign_row_generation();

create function generation_campaign_rows() returns trigger language plpgsql as $$
begin
  -- Most generations belong to no campaign: those cost one index probe.
  perform 1 from campaign_rows where generation_id = new.id;
  if found then
    update campaign_rows set generation_status = new.status, generation_credits = new.credits
    where generation_id = new.id;
  end if;
  return null;
end $$;

create trigger generations_campaign_rows after update of status, credits on generations
  for each row when (old.status is distinct from new.status or old.credits is distinct from new.credits)
  execute function generation_campaign_rows();

-- The rows added and removed by one statement (an update is both) move their campaigns' counters.
-- Each change is what counts of a row: {campaign_id, s (+1 or -1), state, voiceover, credits, gstatus, gcredits}.
create function campaign_counts_apply(changes jsonb) returns void language plpgsql as $$
declare
  notified integer;
begin
  with d as (
    select * from jsonb_to_recordset(changes)
      as x(campaign_id uuid, s integer, state text, voiceover boolean, credits integer, gstatus text, gcredits integer)
  ), sums as (
    select campaign_id,
      sum(s) as total,
      sum(s * (state = 'pending')::int) as pending,
      sum(s * (state <> 'pending')::int) as submitted,
      sum(s * (state = 'submitted' and coalesce(gstatus = 'processing', false))::int) as processing,
      sum(s * (state = 'submitted' and (coalesce(gstatus = 'completed', false) or voiceover))::int) as completed,
      sum(s * (state = 'failed' or coalesce(gstatus = 'failed', false))::int) as failed,
      sum(s * credits) as credits_estimate,
      sum(s * coalesce(case when gstatus in ('processing', 'completed') then gcredits
                            when state = 'submitted' and voiceover then credits end, 0)) as credits_spent
    from d group by campaign_id
  ), changed as (
    update campaign_counters c set
      total = c.total + sums.total, pending = c.pending + sums.pending, submitted = c.submitted + sums.submitted,
      processing = c.processing + sums.processing, completed = c.completed + sums.completed, failed = c.failed + sums.failed,
      credits_estimate = c.credits_estimate + sums.credits_estimate, credits_spent = c.credits_spent + sums.credits_spent
    from sums
    where c.campaign_id = sums.campaign_id
      and (sums.total, sums.pending, sums.submitted, sums.processing, sums.completed, sums.failed, sums.credits_estimate, sums.credits_spent) <> (0, 0, 0, 0, 0, 0, 0, 0)
    returning c.campaign_id
  )
  -- Subscribers of a campaign hear of it when its counts moved, and only then.
  select count(pg_notify('adforge_campaign_events', json_build_object('id', cp.id, 'team_id', cp.team_id)::text)) into notified
  from changed join campaigns cp on cp.id = changed.campaign_id;
end $$;

create function campaign_row_share(campaign_id uuid, s integer, state text, voiceover_id uuid, credits integer, gstatus text, gcredits integer)
returns jsonb language sql immutable as $$
  select jsonb_build_object('campaign_id', campaign_id, 's', s, 'state', state, 'voiceover', voiceover_id is not null,
    'credits', credits, 'gstatus', gstatus, 'gcredits', gcredits)
$$;

create function campaign_rows_counted() returns trigger language plpgsql as $$
declare
  changes jsonb := '[]';
begin
  if tg_op in ('INSERT', 'UPDATE') then
    changes := changes || coalesce((select jsonb_agg(campaign_row_share(n.campaign_id, 1, n.state, n.voiceover_id, n.credits, n.generation_status, n.generation_credits)) from new_rows n), '[]');
  end if;
  if tg_op in ('DELETE', 'UPDATE') then
    changes := changes || coalesce((select jsonb_agg(campaign_row_share(o.campaign_id, -1, o.state, o.voiceover_id, o.credits, o.generation_status, o.generation_credits)) from old_rows o), '[]');
  end if;
  if changes <> '[]' then
    perform campaign_counts_apply(changes);
  end if;
  return null;
end $$;

create trigger campaign_rows_counted_insert after insert on campaign_rows
  referencing new table as new_rows for each statement execute function campaign_rows_counted();
create trigger campaign_rows_counted_update after update on campaign_rows
  referencing old table as old_rows new table as new_rows for each statement execute function campaign_rows_counted();
create trigger campaign_rows_counted_delete after delete on campaign_rows
  referencing old table as old_rows for each statement execute function campaign_rows_counted();
