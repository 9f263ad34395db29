-- The storage counters of generations (0021) kept by a function of their own with static SQL. The
-- shared count_team_storage builds its statement from its arguments and runs it with EXECUTE, so
-- PostgreSQL plans it afresh on every call (about 100 µs, bench/statement-breakdown.ts): for
-- generations that is every create and every status change, nearly always with nothing to add.
-- Static statements are planned once per connection. Same sums, same order of the teams' rows;
-- the other tables, written rarely, keep the shared function.
create function count_generation_storage() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into team_storage as s (team_id, outputs_bytes, inputs_bytes, uploads_bytes)
    select team_id, sum(output_bytes), sum(input_bytes), 0 from new_rows
    where team_id is not null
    group by team_id
    having sum(output_bytes) <> 0 or sum(input_bytes) <> 0
    order by team_id
    on conflict (team_id) do update set
      outputs_bytes = s.outputs_bytes + excluded.outputs_bytes,
      inputs_bytes = s.inputs_bytes + excluded.inputs_bytes;
  elsif tg_op = 'DELETE' then
    insert into team_storage as s (team_id, outputs_bytes, inputs_bytes, uploads_bytes)
    select team_id, -sum(output_bytes), -sum(input_bytes), 0 from old_rows
    where team_id is not null
    group by team_id
    having sum(output_bytes) <> 0 or sum(input_bytes) <> 0
    order by team_id
    on conflict (team_id) do update set
      outputs_bytes = s.outputs_bytes + excluded.outputs_bytes,
      inputs_bytes = s.inputs_bytes + excluded.inputs_bytes;
  else
    insert into team_storage as s (team_id, outputs_bytes, inputs_bytes, uploads_bytes)
    select team_id, sum(o), sum(i), 0 from (
      select team_id, output_bytes as o, input_bytes as i from new_rows
      union all
      select team_id, -output_bytes, -input_bytes from old_rows
    ) d
    where team_id is not null
    group by team_id
    having sum(o) <> 0 or sum(i) <> 0
    order by team_id
    on conflict (team_id) do update set
      outputs_bytes = s.outputs_bytes + excluded.outputs_bytes,
      inputs_bytes = s.inputs_bytes + excluded.inputs_bytes;
  end if;
  return null;
end
$$;

drop trigger generations_storage_ins on generations;
drop trigger generations_storage_upd on generations;
drop trigger generations_storage_del on generations;
create trigger generations_storage_ins after insert on generations referencing new table as new_rows
  for each statement execute function count_generation_storage();
create trigger generations_storage_upd after update on generations referencing old table as old_rows new table as new_rows
  for each statement execute function count_generation_storage();
create trigger generations_storage_del after delete on generations referencing old table as old_rows
  for each statement execute function count_generation_storage();
