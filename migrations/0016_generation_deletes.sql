-- Generations can be deleted. The credit ledger keeps its lines (it names generations by
-- subject_type/subject_id and has no foreign key to them); what a line can no longer read from the
-- deleted row (its type) stays in a tombstone that holds no prompt, parameter or file.

create table deleted_generations (
  id uuid primary key,
  team_id uuid not null references teams (id) on delete cascade,
  operation text not null,
  type text not null,
  kind text not null,
  status text not null,
  credits integer not null,
  created_at timestamptz not null,
  deleted_at timestamptz not null default now()
);
create index deleted_generations_team on deleted_generations (team_id, deleted_at);

-- A campaign row whose generation was deleted keeps the generation's id here (generation_id is
-- then null) and its last status and credits, so its campaign's counts and results do not move.
alter table campaign_rows add column deleted_generation_id uuid;

create or replace function campaign_row_generation() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.generation_id is distinct from old.generation_id then
    -- The row is being marked as the one of a deleted generation: it keeps what it counted.
    if tg_op = 'UPDATE' and new.generation_id is null and new.deleted_generation_id is not distinct from old.generation_id then
      return new;
    end if;
    new.generation_status := null;
    new.generation_credits := null;
    if new.generation_id is not null then
      select g.status, g.credits into new.generation_status, new.generation_credits
      from generations g where g.id = new.generation_id for share;
    end if;
  end if;
  return new;
end $$;
