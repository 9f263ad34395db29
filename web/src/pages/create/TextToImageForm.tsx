import { useState } from 'react';
import { CREATE_TEXT_TO_IMAGE, QUOTE_TEXT_TO_IMAGE } from '../../api/operations.ts';
import { EFFORTS_BY_MODEL } from '../../../../src/domain/image-inputs.ts';
import { IMAGE_MODELS, IMAGE_RESOLUTIONS, type ImageEffort, type ImageModel } from '../../../../src/domain/generation-types.ts';
import { PriceAndSubmit } from './PriceAndSubmit.tsx';
import { fromTable } from './from-table.ts';
import { useCreate, useSubmitToGallery } from './use-create.ts';

const RATIOS = ['1:1', '4:5', '9:16', '16:9', '3:2', '2:3'];

export function TextToImageForm() {
  const [prompt, setPrompt] = useState('');
  const [model, setModel] = useState<ImageModel>('fast');
  const [effort, setEffort] = useState<ImageEffort | ''>('');
  const [fast, setFast] = useState(false);
  const [ratio, setRatio] = useState('1:1');
  const [quantity, setQuantity] = useState(1);
  const [resolution, setResolution] = useState('1k');
  const efforts = EFFORTS_BY_MODEL[model];
  const body = {
    prompt,
    model,
    aspect_ratio: ratio,
    quantity,
    resolution,
    ...(effort && efforts.includes(effort) ? { effort } : {}),
    ...(fast && model === 'gpt-2.5' ? { fast } : {}),
  };
  const create = useCreate({ ...fromTable('text-to-image'), body, quote: QUOTE_TEXT_TO_IMAGE, create: CREATE_TEXT_TO_IMAGE });
  const submit = useSubmitToGallery(create.submit);
  return (
    <form className="card create-form" onSubmit={submit} aria-label="Text to image">
      <label>
        Prompt
        <textarea required maxLength={5000} rows={4} value={prompt} placeholder="A bottle of cold brew on a sunlit marble counter, morning light" onChange={(e) => setPrompt(e.target.value)} />
      </label>
      <div className="grid">
        <label>
          Model
          <select value={model} onChange={(e) => setModel(e.target.value as ImageModel)}>
            {IMAGE_MODELS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </label>
        {efforts.length > 0 && (
          <label>
            Effort
            <select value={effort} onChange={(e) => setEffort(e.target.value as ImageEffort)}>
              <option value="">medium (default)</option>
              {efforts.map((x) => (
                <option key={x}>{x}</option>
              ))}
            </select>
          </label>
        )}
        {model === 'gpt-2.5' && (
          <label className="check">
            <input type="checkbox" checked={fast} onChange={(e) => setFast(e.target.checked)} /> Fast
          </label>
        )}
        <label>
          Aspect ratio
          <input list="ratios" value={ratio} onChange={(e) => setRatio(e.target.value)} />
          <datalist id="ratios">
            {RATIOS.map((r) => (
              <option key={r} value={r} />
            ))}
          </datalist>
        </label>
        <label>
          Images
          <input type="number" min={1} max={8} value={quantity} onChange={(e) => setQuantity(Number(e.target.value))} />
        </label>
        <label>
          Resolution
          <select value={resolution} onChange={(e) => setResolution(e.target.value)}>
            {IMAGE_RESOLUTIONS.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
      </div>
      <PriceAndSubmit create={create} label={quantity > 1 ? `Create ${quantity} images` : 'Create image'} />
    </form>
  );
}
