import { useEffect, useState } from 'react';
import { teamAvatars, type Avatar } from '../../api/avatars.ts';
import { gql } from '../../api/client.ts';
import { CREATE_TALKING_AVATAR, QUOTE_TALKING_AVATAR, VOICES } from '../../api/operations.ts';
import { ErrorNote } from '../../components/ui.tsx';
import { LIPSYNC_MODELS } from '../../../../src/domain/video-inputs.ts';
import { VOICE_ACCENTS } from '../../../../src/domain/voiceover-inputs.ts';
import { PriceAndSubmit } from './PriceAndSubmit.tsx';
import { fromTable } from './from-table.ts';
import { useCreate, useSubmitToGallery } from './use-create.ts';

interface Voice {
  id: string;
  name: string;
  gender: string;
  age_group: string;
  accent: string;
  style: string;
  preview_audio_url: string;
}

export function TalkingAvatarForm() {
  const [avatars, setAvatars] = useState<Avatar[]>([]);
  const [voices, setVoices] = useState<Voice[]>([]);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [avatar, setAvatar] = useState<Avatar | null>(null);
  const [voiceId, setVoiceId] = useState('');
  const [gender, setGender] = useState('');
  const [accent, setAccent] = useState('');
  const [script, setScript] = useState('');
  const [lipsync, setLipsync] = useState<string>('heygen-avatar4');
  useEffect(() => {
    teamAvatars().then((all) => {
      setAvatars(all);
      setAvatar((a) => a ?? all[0] ?? null);
    }, setLoadError);
  }, []);
  useEffect(() => {
    gql<{ voices: { items: Voice[] } }>(VOICES, { limit: 100, gender: gender || null, accent: accent || null }).then((d) => setVoices(d.voices.items), setLoadError);
  }, [gender, accent]);
  const body = { avatar_id: avatar?.id ?? '', avatar_type: avatar?.avatar_type ?? 'platform', script, voice_id: voiceId, lipsync_model: lipsync };
  const create = useCreate({ ...fromTable('talking-avatar'), body, quote: QUOTE_TALKING_AVATAR, create: CREATE_TALKING_AVATAR });
  const submit = useSubmitToGallery(create.submit);
  return (
    <form className="card create-form" onSubmit={submit} aria-label="Talking avatar">
      <ErrorNote error={loadError} />
      <fieldset>
        <legend>Avatar</legend>
        <div className="picker" role="radiogroup" aria-label="Avatar">
          {avatars.map((a) => (
            <label key={a.id} className={`pick ${avatar?.id === a.id ? 'chosen' : ''}`}>
              <input type="radio" name="avatar" checked={avatar?.id === a.id} onChange={() => setAvatar(a)} />
              <img src={a.thumbnail_url} alt="" loading="lazy" />
              <span>{a.name}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <label>
        Script
        <textarea required maxLength={5000} rows={4} value={script} placeholder="Tired of cold coffee? Meet the mug that keeps it hot for 8 hours." onChange={(e) => setScript(e.target.value)} />
      </label>
      <fieldset>
        <legend>Voice</legend>
        <div className="row wrap filters">
          <label>
            Gender
            <select value={gender} onChange={(e) => setGender(e.target.value)}>
              <option value="">any</option>
              <option>female</option>
              <option>male</option>
            </select>
          </label>
          <label>
            Accent
            <select value={accent} onChange={(e) => setAccent(e.target.value)}>
              <option value="">any</option>
              {VOICE_ACCENTS.map((a) => (
                <option key={a}>{a}</option>
              ))}
            </select>
          </label>
        </div>
        <ul className="voices" aria-label="Voices">
          {voices.map((v) => (
            <li key={v.id} className={voiceId === v.id ? 'chosen' : ''}>
              <label className="check">
                <input type="radio" name="voice" checked={voiceId === v.id} onChange={() => setVoiceId(v.id)} />
                <span>
                  <strong>{v.name}</strong> <span className="hint">{[v.gender, v.age_group.replace('_', ' '), v.accent, v.style].join(' · ')}</span>
                </span>
              </label>
              <audio src={v.preview_audio_url} controls preload="none" aria-label={`Preview of ${v.name}`} />
            </li>
          ))}
        </ul>
      </fieldset>
      <label>
        Lip-sync model
        <select value={lipsync} onChange={(e) => setLipsync(e.target.value)}>
          {LIPSYNC_MODELS.map((m) => (
            <option key={m}>{m}</option>
          ))}
        </select>
      </label>
      <PriceAndSubmit create={create} label="Create video" />
    </form>
  );
}
