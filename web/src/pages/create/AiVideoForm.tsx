import { useState } from 'react';
import { CREATE_AI_VIDEO, QUOTE_AI_VIDEO } from '../../api/operations.ts';
import { VIDEO_MODELS, type VideoModel } from '../../../../src/domain/generation-types.ts';
import { KLING_QUALITIES, VIDEO_MODEL_TABLE } from '../../../../src/domain/video-models.ts';
import { appendLine, FileDrop } from '../../components/FileDrop.tsx';
import { PriceAndSubmit } from './PriceAndSubmit.tsx';
import { fromTable } from './from-table.ts';
import { useCreate, useSubmitToGallery } from './use-create.ts';

const COMMON_RATIOS = ['16:9', '9:16', '1:1', '4:5'];

/** The model table drives the form: only the ratios, durations and options the chosen model takes. */
export function AiVideoForm() {
  const [model, setModel] = useState<VideoModel>('veo-3.1-fast');
  const spec = VIDEO_MODEL_TABLE[model];
  const ratios = spec.aspectRatios === 'any' ? COMMON_RATIOS : spec.aspectRatios;
  const durations = spec.durations.kind === 'list' ? spec.durations.values : range(spec.durations.min, spec.durations.max);
  const [prompt, setPrompt] = useState('');
  const [ratio, setRatio] = useState('16:9');
  const [duration, setDuration] = useState(8);
  const [resolution, setResolution] = useState<string>(spec.defaultResolution);
  const [hd, setHd] = useState(false);
  const [quality, setQuality] = useState('pro');
  const [audio, setAudio] = useState(spec.defaultGenerateAudio);
  const [firstFrame, setFirstFrame] = useState('');
  const [lastFrame, setLastFrame] = useState('');
  const [references, setReferences] = useState('');
  function choose(m: VideoModel) {
    const next = VIDEO_MODEL_TABLE[m];
    setModel(m);
    // Keep what still fits the new model; otherwise its first choice.
    const nextRatios = next.aspectRatios === 'any' ? COMMON_RATIOS : next.aspectRatios;
    if (next.aspectRatios !== 'any' && !nextRatios.includes(ratio)) setRatio(nextRatios[0]!);
    const nextDurations = next.durations.kind === 'list' ? next.durations.values : range(next.durations.min, next.durations.max);
    if (!nextDurations.includes(duration)) setDuration(nextDurations[0]!);
    if (!next.resolutions.includes(resolution as never)) setResolution(next.defaultResolution);
    setAudio(next.defaultGenerateAudio);
  }
  const refs = references.split(/\s+/).filter(Boolean);
  const body = {
    model,
    prompt,
    aspect_ratio: ratio,
    duration,
    resolution,
    ...(spec.hd && hd ? { hd } : {}),
    ...(spec.takesQuality ? { quality } : {}),
    generate_audio: audio,
    ...(spec.takesFrames && firstFrame.trim() ? { first_frame_image_url: firstFrame.trim() } : {}),
    ...(spec.takesFrames && lastFrame.trim() ? { last_frame_image_url: lastFrame.trim() } : {}),
    ...(spec.maxReferenceImages > 0 && refs.length ? { reference_image_urls: refs } : {}),
  };
  const create = useCreate({ ...fromTable('ai-video'), body, quote: QUOTE_AI_VIDEO, create: CREATE_AI_VIDEO });
  const submit = useSubmitToGallery(create.submit);
  return (
    <form className="card create-form" onSubmit={submit} aria-label="AI video">
      <label>
        Prompt
        <textarea required maxLength={5000} rows={4} value={prompt} placeholder="A slow dolly shot of a sneaker on wet asphalt at dusk" onChange={(e) => setPrompt(e.target.value)} />
      </label>
      <div className="grid">
        <label>
          Model
          <select value={model} onChange={(e) => choose(e.target.value as VideoModel)}>
            {VIDEO_MODELS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </label>
        <label>
          Aspect ratio
          {spec.aspectRatios === 'any' ? (
            <>
              <input list="video-ratios" value={ratio} onChange={(e) => setRatio(e.target.value)} />
              <datalist id="video-ratios">
                {COMMON_RATIOS.map((r) => (
                  <option key={r} value={r} />
                ))}
              </datalist>
            </>
          ) : (
            <select value={ratio} onChange={(e) => setRatio(e.target.value)}>
              {ratios.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          )}
        </label>
        <label>
          Seconds
          <select value={duration} onChange={(e) => setDuration(Number(e.target.value))}>
            {durations.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
        <label>
          Resolution
          <select value={resolution} onChange={(e) => setResolution(e.target.value)}>
            {spec.resolutions.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        {spec.takesQuality && (
          <label>
            Quality
            <select value={quality} onChange={(e) => setQuality(e.target.value)}>
              {KLING_QUALITIES.map((q) => (
                <option key={q}>{q}</option>
              ))}
            </select>
          </label>
        )}
        {spec.hd && (
          <label className="check">
            <input type="checkbox" checked={hd} onChange={(e) => setHd(e.target.checked)} /> HD
          </label>
        )}
        <label className="check">
          <input type="checkbox" checked={audio} onChange={(e) => setAudio(e.target.checked)} /> Sound
        </label>
      </div>
      {spec.takesFrames && (
        <div className="grid">
          <div className="field">
            <label>
              First frame image URL{spec.requiresFirstFrame ? '' : ' (optional)'}
              <input type="url" value={firstFrame} onChange={(e) => setFirstFrame(e.target.value)} />
            </label>
            <FileDrop label="First frame image file" kind="image" value={firstFrame} onUploaded={setFirstFrame} />
          </div>
          <div className="field">
            <label>
              Last frame image URL (optional)
              <input type="url" value={lastFrame} onChange={(e) => setLastFrame(e.target.value)} />
            </label>
            <FileDrop label="Last frame image file" kind="image" value={lastFrame} onUploaded={setLastFrame} />
          </div>
        </div>
      )}
      {spec.maxReferenceImages > 0 && (
        <div className="field">
          <label>
            Reference image URLs (up to {spec.maxReferenceImages}, one per line)
            <textarea rows={2} value={references} onChange={(e) => setReferences(e.target.value)} />
          </label>
          <FileDrop label="Reference image files" kind="image" multiple value={references} onUploaded={(ref) => setReferences((r) => appendLine(r, ref))} />
        </div>
      )}
      <PriceAndSubmit create={create} label="Create video" />
    </form>
  );
}

function range(min: number, max: number): number[] {
  return Array.from({ length: max - min + 1 }, (_, i) => min + i);
}
