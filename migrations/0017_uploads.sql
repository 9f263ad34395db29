-- Files a team uploads to use as inputs (`upload:<id>` in any URL field). A row is `ready` once its
-- bytes are stored and sniffed; a presigned upload (S3 storage) is `pending` until its completion
-- call has checked what the client put in the bucket. Unused uploads are deleted after expires_at.

create table uploads (
  id uuid primary key,
  team_id uuid not null references teams (id) on delete cascade,
  status text not null check (status in ('pending', 'ready')),
  storage_key text not null,
  -- What the bytes were sniffed to be (null while pending).
  content_type text,
  kind text check (kind in ('image', 'video', 'audio')),
  size bigint not null,
  -- What a presigned upload's client said it would send, checked at completion.
  declared_content_type text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index uploads_team on uploads (team_id, created_at desc);
create index uploads_expiry on uploads (expires_at);
