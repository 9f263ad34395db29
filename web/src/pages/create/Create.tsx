import { NavLink, useParams } from 'react-router';
import { AiVideoForm } from './AiVideoForm.tsx';
import { FieldsForm, type FieldsFormConfig } from './FieldsForm.tsx';
import { IMAGE_EDIT, LOCALIZE, PRODUCT_SHOTS, SWAP_AVATAR, TEXT_TO_SPEECH, VIDEO_EDIT } from './forms.ts';
import { TalkingAvatarForm } from './TalkingAvatarForm.tsx';
import { TextToImageForm } from './TextToImageForm.tsx';

const fields = (config: FieldsFormConfig) => () => <FieldsForm key={config.label} config={config} />;

/** One form per generation type of the spec, and the voiceover. */
const FORMS: Record<string, { label: string; form: () => React.JSX.Element }> = {
  'text-to-image': { label: 'Text to image', form: TextToImageForm },
  'product-shots': { label: 'Product shots', form: fields(PRODUCT_SHOTS) },
  'image-edit': { label: 'Image edit', form: fields(IMAGE_EDIT) },
  'talking-avatar': { label: 'Talking avatar', form: TalkingAvatarForm },
  'ai-video': { label: 'AI video', form: AiVideoForm },
  'swap-avatar': { label: 'Avatar swap', form: fields(SWAP_AVATAR) },
  localize: { label: 'Localize', form: fields(LOCALIZE) },
  captions: { label: 'Captions', form: fields(VIDEO_EDIT) },
  voiceover: { label: 'Voiceover', form: fields(TEXT_TO_SPEECH) },
};

export function Create() {
  const { type = 'text-to-image' } = useParams();
  const chosen = FORMS[type];
  return (
    <section>
      <h1>Create</h1>
      <nav className="tabs" aria-label="What to create">
        {Object.entries(FORMS).map(([k, f]) => (
          <NavLink key={k} to={`/create/${k}`}>
            {f.label}
          </NavLink>
        ))}
      </nav>
      {chosen ? <chosen.form /> : <p className="error">Unknown kind of generation: {type}</p>}
    </section>
  );
}
