import { NavLink, useParams } from 'react-router';
import { OPERATION_TABLE, type FormOperation } from '../../../../src/domain/operations.ts';
import { DemoBanner } from '../../components/DemoBanner.tsx';
import { AiVideoForm } from './AiVideoForm.tsx';
import { FieldsForm, type FieldsFormConfig } from './FieldsForm.tsx';
import { IMAGE_EDIT, LOCALIZE, PRODUCT_SHOTS, SWAP_AVATAR, TEXT_TO_SPEECH, VIDEO_EDIT } from './forms.ts';
import { TalkingAvatarForm } from './TalkingAvatarForm.tsx';
import { TextToImageForm } from './TextToImageForm.tsx';

const fields = (config: FieldsFormConfig) => () => <FieldsForm key={config.label} config={config} />;

/** One form per operation of the table that has one (every generation and the voiceover), in the order of the tabs. */
const FORM_OF: { [O in FormOperation]: () => React.JSX.Element } = {
  'text-to-image': TextToImageForm,
  'product-shots': fields(PRODUCT_SHOTS),
  'image-edit': fields(IMAGE_EDIT),
  'talking-avatar': TalkingAvatarForm,
  'ai-video': AiVideoForm,
  'swap-avatar': fields(SWAP_AVATAR),
  localize: fields(LOCALIZE),
  'video-edit': fields(VIDEO_EDIT),
  'text-to-speech': fields(TEXT_TO_SPEECH),
};

/** Each tab's path under /create/, its label and the operation it makes, from the table. */
const FORMS: Record<string, { label: string; form: () => React.JSX.Element; operation: FormOperation }> = Object.fromEntries(
  (Object.entries(FORM_OF) as [FormOperation, () => React.JSX.Element][]).flatMap(([op, form]) => {
    const tab = OPERATION_TABLE[op].form;
    return tab ? [[tab.tab, { label: tab.label, form, operation: op }]] : [];
  }),
);

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
      {chosen && <DemoBanner operation={chosen.operation} />}
      {chosen ? <chosen.form /> : <p className="error">Unknown kind of generation: {type}</p>}
    </section>
  );
}
