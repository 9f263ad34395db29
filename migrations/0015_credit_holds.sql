-- Credits set aside while a voiceover's speech is made (seconds of paid provider work before its
-- row exists): concurrent voiceovers of one team cannot all start on the same balance. A hold is
-- not a charge: the debit is written with the voiceover's row, and the hold goes in that same
-- transaction. A hold whose maker died simply expires. An Idempotency-Key's retry finds its own
-- hold again (its id comes from the key), so a replay after a crash is not refused by it.
create table credit_holds (
  id text primary key,
  team_id uuid not null references teams (id) on delete cascade,
  credits integer not null check (credits > 0),
  expires_at timestamptz not null
);
create index credit_holds_team on credit_holds (team_id, expires_at);
