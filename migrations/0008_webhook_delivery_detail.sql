-- What an integrator needs to see why a webhook did not arrive and to send it again: the exact
-- body and event id of every attempt, test events (no generation), and which attempt a
-- redelivery repeats. Listed per key, newest first.
alter table webhook_deliveries
  alter column generation_id drop not null,
  add column event_id text,
  add column body text,
  add column redelivery_of uuid references webhook_deliveries (id) on delete set null;
create index webhook_deliveries_key on webhook_deliveries (api_key_id, attempted_at desc, id);
