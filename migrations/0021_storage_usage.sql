-- Storage usage per team (issue 28 item 5). Each row that names stored files records their size,
-- written with the row; team_storage holds the per-team sums, kept by the statement triggers below
-- in the same transaction as every insert, update and delete of those rows (a generation delete,
-- the retention job, an upload's expiry, a team's deletion all go through them), so it is always
-- the exact sum of the columns and reading it is one row.
--   outputs: a generation's results, a voiceover's audio
--   inputs:  the input copy kept for a generation, a product's image, a custom avatar's image
--   uploads: a ready upload's size
-- Rows written before this migration have 0 bytes until `adforge storage recount` reads their
-- sizes from storage (a migration cannot); uploads already had their size and are counted here.
alter table generations
  add column output_bytes bigint not null default 0 check (output_bytes >= 0),
  add column input_bytes bigint not null default 0 check (input_bytes >= 0);
alter table voiceovers add column audio_bytes bigint not null default 0 check (audio_bytes >= 0);
alter table products add column image_bytes bigint not null default 0 check (image_bytes >= 0);
alter table avatars add column image_bytes bigint not null default 0 check (image_bytes >= 0);

-- No foreign key: a row of a team is deleted by its own statement, and the counter must take that
-- decrement whatever order a cascade visits the tables in. A deleted team keeps its tombstone row.
create table team_storage (
  team_id uuid primary key,
  outputs_bytes bigint not null default 0,
  inputs_bytes bigint not null default 0,
  uploads_bytes bigint not null default 0
);

-- One function for every counted table: its arguments are the SQL of the outputs, inputs and uploads
-- bytes of one row. Once per statement, the changed rows' bytes (new minus old) are summed per team
-- and added to the counters, the teams' rows taken in one order (no deadlock between two statements).
create function count_team_storage() returns trigger language plpgsql as $$
declare
  pick text := format('select team_id, (%s)::bigint as o, (%s)::bigint as i, (%s)::bigint as u from ', tg_argv[0], tg_argv[1], tg_argv[2]);
  gone text := 'select team_id, -o as o, -i as i, -u as u from (' || pick || 'old_rows) x';
  changes text;
begin
  changes := case tg_op when 'INSERT' then pick || 'new_rows' when 'DELETE' then gone else pick || 'new_rows union all ' || gone end;
  execute format($q$
    insert into team_storage as s (team_id, outputs_bytes, inputs_bytes, uploads_bytes)
    select team_id, sum(o), sum(i), sum(u) from (%s) d
    where team_id is not null
    group by team_id
    having sum(o) <> 0 or sum(i) <> 0 or sum(u) <> 0
    order by team_id
    on conflict (team_id) do update set
      outputs_bytes = s.outputs_bytes + excluded.outputs_bytes,
      inputs_bytes = s.inputs_bytes + excluded.inputs_bytes,
      uploads_bytes = s.uploads_bytes + excluded.uploads_bytes$q$, changes);
  return null;
end
$$;

create trigger generations_storage_ins after insert on generations referencing new table as new_rows
  for each statement execute function count_team_storage('output_bytes', 'input_bytes', '0');
create trigger generations_storage_upd after update on generations referencing old table as old_rows new table as new_rows
  for each statement execute function count_team_storage('output_bytes', 'input_bytes', '0');
create trigger generations_storage_del after delete on generations referencing old table as old_rows
  for each statement execute function count_team_storage('output_bytes', 'input_bytes', '0');

create trigger voiceovers_storage_ins after insert on voiceovers referencing new table as new_rows
  for each statement execute function count_team_storage('audio_bytes', '0', '0');
create trigger voiceovers_storage_upd after update on voiceovers referencing old table as old_rows new table as new_rows
  for each statement execute function count_team_storage('audio_bytes', '0', '0');
create trigger voiceovers_storage_del after delete on voiceovers referencing old table as old_rows
  for each statement execute function count_team_storage('audio_bytes', '0', '0');

create trigger products_storage_ins after insert on products referencing new table as new_rows
  for each statement execute function count_team_storage('0', 'image_bytes', '0');
create trigger products_storage_upd after update on products referencing old table as old_rows new table as new_rows
  for each statement execute function count_team_storage('0', 'image_bytes', '0');
create trigger products_storage_del after delete on products referencing old table as old_rows
  for each statement execute function count_team_storage('0', 'image_bytes', '0');

create trigger avatars_storage_ins after insert on avatars referencing new table as new_rows
  for each statement execute function count_team_storage('0', 'image_bytes', '0');
create trigger avatars_storage_upd after update on avatars referencing old table as old_rows new table as new_rows
  for each statement execute function count_team_storage('0', 'image_bytes', '0');
create trigger avatars_storage_del after delete on avatars referencing old table as old_rows
  for each statement execute function count_team_storage('0', 'image_bytes', '0');

-- A pending (presigned) upload counts once its completion found the bytes: then it is `ready`.
create trigger uploads_storage_ins after insert on uploads referencing new table as new_rows
  for each statement execute function count_team_storage('0', '0', $$case when status = 'ready' then size else 0 end$$);
create trigger uploads_storage_upd after update on uploads referencing old table as old_rows new table as new_rows
  for each statement execute function count_team_storage('0', '0', $$case when status = 'ready' then size else 0 end$$);
create trigger uploads_storage_del after delete on uploads referencing old table as old_rows
  for each statement execute function count_team_storage('0', '0', $$case when status = 'ready' then size else 0 end$$);

insert into team_storage (team_id, uploads_bytes)
select team_id, sum(size) from uploads where status = 'ready' group by team_id;
