-- The storage counters of generations (0021) kept by a function of their own with static SQL. The
-- shared count_team_storage builds its statement from its arguments and runs it with EXECUTE, so
-- PostgreSQL plans it afresh on every call (about 100 µs, bench/statement-breakdown.ts): for
-- generations that is every create and every status change, nearly always with nothing to add.
-- Static statements are planned once per connection. Same sums, same order of the teams' rows;
-- the other tables, written rarely, keep the shared function.
create function count_generation_storage() returns trigger language plpgsql as $$
declare
  teams uuid[];
  outs bigint[];
  ins bigint[];
begin
  -- The changed rows' bytes (new minus old); a transition table exists only for its operations.
  if tg_op = 'INSERT' then
    select array_agg(team_id), array_agg(output_bytes), array_agg(input_bytes) into teams, outs, ins from new_rows;
  elsif tg_op = 'DELETE' then
    select array_agg(team_id), array_agg(-output_bytes), array_agg(-input_bytes) into teams, outs, ins from old_rows;
  else
    select array_agg(team_id), array_agg(o), array_agg(i) into teams, outs, ins from (
      select team_id, output_bytes as o, input_bytes as i from new_rows
      union all
      select team_id, -output_bytes, -input_bytes from old_rows
    ) d;
  end if;
  insert into team_storage as s (team_id, outputs_bytes, inputs_bytes, uploads_bytes)
  select team_id, sum(o), sum(i), 0 from unnest(teams, outs, ins) as d(team_id, o, i)
  where team_id is not null
  group by team_id
  having sum(o) <> 0 or sum(i) <> 0
  order by team_id
  on conflict (team_id) do update set
    outputs_bytes = s.outputs_bytes + excluded.outputs_bytes,
    inputs_bytes = s.inputs_bytes + excluded.inputs_bytes;
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
