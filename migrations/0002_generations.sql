-- Generations, what they use, idempotent responses, webhook attempts, and the template catalogues.

create table style_templates (
  id text primary key,
  name text not null,
  description text not null,
  prompt text not null,
  background text not null,
  accent text not null,
  created_at timestamptz not null default now()
);

insert into style_templates (id, name, description, prompt, background, accent) values
  ('studio-white', 'Studio white', 'Seamless white sweep, soft box lighting', 'the product on a seamless white studio sweep, soft even light, subtle shadow', '#f5f5f5', '#d0d0d0'),
  ('marble-luxe', 'Marble luxe', 'Polished marble slab with warm highlights', 'the product on polished white marble, warm rim light, luxury editorial', '#e8e2da', '#b89b72'),
  ('sunlit-kitchen', 'Sunlit kitchen', 'Wooden counter by a bright window', 'the product on a wooden kitchen counter, morning sunlight, plants in the background', '#f3e3c3', '#8c5a2b'),
  ('neon-night', 'Neon night', 'Dark scene with magenta and cyan neon', 'the product under magenta and cyan neon light on a wet dark street', '#14121f', '#ff2bd6'),
  ('pastel-pop', 'Pastel pop', 'Flat pastel colour blocks, playful', 'the product on pastel colour blocks, hard shadows, playful pop art', '#ffd6e0', '#a0e7e5'),
  ('outdoor-adventure', 'Outdoor adventure', 'Rocky trail at golden hour', 'the product on a rock by a mountain trail at golden hour', '#d9a441', '#3e5c3a'),
  ('minimal-shadow', 'Minimal shadow', 'Single colour backdrop with a long shadow', 'the product on a single-colour backdrop with a long diagonal shadow', '#c9d6df', '#52616b'),
  ('holiday-festive', 'Holiday festive', 'Bokeh lights and wrapping paper', 'the product among wrapping paper and warm bokeh lights', '#7a1f2b', '#e0b040');

create table caption_templates (
  id text primary key,
  name text not null,
  description text not null,
  font_size integer not null,
  color text not null,
  highlight_color text not null,
  position text not null check (position in ('top', 'center', 'bottom')),
  uppercase boolean not null,
  created_at timestamptz not null default now()
);

insert into caption_templates (id, name, description, font_size, color, highlight_color, position, uppercase) values
  ('bold-pop', 'Bold pop', 'Big white words, yellow highlight, centre', 64, '#ffffff', '#ffd400', 'center', true),
  ('clean-subtitle', 'Clean subtitle', 'Classic white subtitles at the bottom', 40, '#ffffff', '#ffffff', 'bottom', false),
  ('karaoke', 'Karaoke', 'Word by word highlight in green', 52, '#ffffff', '#39ff14', 'bottom', false),
  ('headline-top', 'Headline top', 'Upper-case headline across the top', 56, '#ffffff', '#ff4d4d', 'top', true),
  ('minimal-lower', 'Minimal lower third', 'Small grey lower-third captions', 32, '#e6e6e6', '#ffffff', 'bottom', false),
  ('neon-glow', 'Neon glow', 'Magenta glow captions, centre', 58, '#ff6bf2', '#00f0ff', 'center', true),
  ('story-serif', 'Story serif', 'Warm serif captions for storytelling', 44, '#fff4e0', '#ffb347', 'bottom', false);

create table generations (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  api_key_id uuid references api_keys (id) on delete set null,
  operation text not null,
  type text not null,
  kind text not null check (kind in ('video', 'image')),
  status text not null default 'processing' check (status in ('processing', 'completed', 'failed')),
  params jsonb not null,
  credits integer not null check (credits >= 0),
  result_keys text[] not null default '{}',
  -- What only the finished media can tell (e.g. the spoken duration of a talking avatar).
  result_meta jsonb not null default '{}',
  error text,
  source_generation_id uuid references generations (id) on delete set null,
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  -- The sweeper fails (and refunds) anything still processing past this moment.
  deadline_at timestamptz not null,
  check ((status = 'processing') = (completed_at is null))
);
create index generations_team_created on generations (team_id, created_at desc, id desc);
create index generations_team_kind_created on generations (team_id, kind, created_at desc, id desc);
create index generations_team_type_created on generations (team_id, type, created_at desc, id desc);
create index generations_processing_deadline on generations (deadline_at) where status = 'processing';

-- RESTRICT: a product or custom avatar in use cannot be deleted (409).
create table generation_products (
  generation_id uuid not null references generations (id) on delete cascade,
  product_id uuid not null references products (id) on delete restrict,
  primary key (generation_id, product_id)
);
create index generation_products_product on generation_products (product_id);

create table generation_avatars (
  generation_id uuid not null references generations (id) on delete cascade,
  avatar_id uuid not null references avatars (id) on delete restrict,
  primary key (generation_id, avatar_id)
);
create index generation_avatars_avatar on generation_avatars (avatar_id);

create table idempotency_keys (
  team_id uuid not null references teams (id) on delete cascade,
  method text not null,
  path text not null,
  key text not null,
  request_hash bytea not null,
  response_status integer not null,
  response_body jsonb,
  created_at timestamptz not null default now(),
  primary key (team_id, method, path, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);

create table webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  generation_id uuid not null references generations (id) on delete cascade,
  api_key_id uuid references api_keys (id) on delete set null,
  event text not null,
  url text not null,
  ok boolean not null,
  status_code integer,
  latency_ms integer not null,
  error text,
  attempted_at timestamptz not null default now()
);
create index webhook_deliveries_generation on webhook_deliveries (generation_id);

create table worker_heartbeats (
  worker_id text primary key,
  seen_at timestamptz not null default now()
);
