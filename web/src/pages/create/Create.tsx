import { NavLink, useParams } from 'react-router';
import { TextToImageForm } from './TextToImageForm.tsx';

const FORMS: Record<string, { label: string; form: () => React.JSX.Element }> = {
  'text-to-image': { label: 'Text to image', form: TextToImageForm },
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
