-- The voice catalogue (seeded from src/domain/catalogue/voices.ts at every start) and the
-- voiceovers teams make with it.

create table voices (
  id uuid primary key,
  name text not null,
  gender text not null check (gender in ('male', 'female', 'other')),
  age_group text not null check (age_group in ('kid', 'young_adult', 'adult', 'senior')),
  accent text not null,
  style text not null,
  -- How the local engine speaks it (language, variant, pitch, speed).
  engine_voice jsonb not null,
  created_at timestamptz not null default now()
);
create index voices_name on voices (name, id);

create table voiceovers (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  api_key_id uuid references api_keys (id) on delete set null,
  kind text not null check (kind in ('text-to-speech', 'speech-to-speech')),
  voice_id uuid not null references voices (id),
  -- text-to-speech: what was said; speech-to-speech: where the source came from and how long it was.
  text text,
  source_url text,
  source_duration_seconds double precision,
  model text,
  voice_settings jsonb,
  duration_seconds double precision not null check (duration_seconds > 0),
  audio_key text not null,
  credits integer not null check (credits >= 0),
  created_at timestamptz not null default now(),
  check ((kind = 'text-to-speech') = (text is not null)),
  check ((kind = 'speech-to-speech') = (source_duration_seconds is not null))
);
create index voiceovers_team_created on voiceovers (team_id, created_at desc, id desc);
