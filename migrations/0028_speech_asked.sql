-- When a talking avatar's script was sent to a speech provider that bills each request
-- (ElevenLabs): written before the request goes, cleared when its answer made nothing. A retry
-- that finds it set with no speech stored knows a paid answer was lost, and does not send again.
alter table generations add column speech_asked_at timestamptz;
