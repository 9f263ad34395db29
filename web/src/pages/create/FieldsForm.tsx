import { useEffect, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import type { z } from 'zod';
import { appendLine, FileDrop, fileLabelOf, type UploadKind } from '../../components/FileDrop.tsx';
import { ErrorNote } from '../../components/ui.tsx';
import { PriceAndSubmit } from './PriceAndSubmit.tsx';
import { useCreate } from './use-create.ts';

export interface FormField {
  name: string;
  label: string;
  kind: 'text' | 'textarea' | 'url' | 'urls' | 'number' | 'select' | 'checkbox';
  options?: readonly string[];
  /** Options read from the team's data: [value, label] pairs. */
  load?: () => Promise<[string, string][]>;
  optional?: boolean;
  initial?: string | boolean;
  placeholder?: string;
  hint?: string;
  /** A URL field whose file may be dropped or picked instead: the kind it takes. */
  upload?: UploadKind;
}

export interface FieldsFormConfig {
  label: string;
  fields: FormField[];
  schema: z.ZodType;
  quote: string;
  quoteField: string;
  create: string;
  createField: string;
  submitLabel: string;
  /** What a create answers that is not a generation (a voiceover): shown here instead of the gallery. */
  inline?: boolean;
}

/** A create form built from a list of fields: the same rules, price and one-key-per-submission as every form. */
export function FieldsForm({ config }: { config: FieldsFormConfig }) {
  const navigate = useNavigate();
  const [values, setValues] = useState<Record<string, string | boolean>>(() => Object.fromEntries(config.fields.map((f) => [f.name, f.initial ?? (f.kind === 'checkbox' ? false : '')])));
  const [loaded, setLoaded] = useState<Record<string, [string, string][]>>({});
  const [loadError, setLoadError] = useState<unknown>(null);
  const [result, setResult] = useState<Record<string, any> | null>(null);
  useEffect(() => {
    for (const f of config.fields) {
      f.load?.().then((opts) => {
        setLoaded((l) => ({ ...l, [f.name]: opts }));
        setValues((v) => (v[f.name] === '' && opts[0] ? { ...v, [f.name]: opts[0][0] } : v));
      }, setLoadError);
    }
  }, [config]);
  const body: Record<string, unknown> = {};
  for (const f of config.fields) {
    const v = values[f.name];
    if (f.kind === 'checkbox') body[f.name] = v === true;
    else if (typeof v === 'string' && v.trim() !== '') {
      body[f.name] = f.kind === 'number' ? Number(v) : f.kind === 'urls' ? v.split(/\s+/).filter(Boolean) : v.trim();
    } else if (f.kind === 'urls') body[f.name] = [];
  }
  const create = useCreate({ schema: config.schema, body, quote: config.quote, quoteField: config.quoteField, create: config.create, createField: config.createField });
  async function submit(e: FormEvent) {
    e.preventDefault();
    const created = await create.submit();
    if (!created) return;
    if (config.inline) setResult(created);
    else navigate(`/?created=${created.generation_id}`);
  }
  const set = (name: string, value: string | boolean) => setValues({ ...values, [name]: value });
  const uploaded = (f: FormField) => (ref: string) => setValues((v) => ({ ...v, [f.name]: f.kind === 'urls' ? appendLine(String(v[f.name] ?? ''), ref) : ref }));
  return (
    <form className="card create-form" onSubmit={submit} aria-label={config.label}>
      <ErrorNote error={loadError} />
      <div className="grid">
        {config.fields.map((f) => {
          const label = `${f.label}${f.optional ? ' (optional)' : ''}`;
          const v = values[f.name];
          if (f.kind === 'checkbox')
            return (
              <label key={f.name} className="check">
                <input type="checkbox" checked={v === true} onChange={(e) => set(f.name, e.target.checked)} /> {f.label}
              </label>
            );
          const options = f.options?.map((o): [string, string] => [o, o]) ?? loaded[f.name];
          const wide = f.kind === 'textarea' || f.kind === 'urls' ? 'wide' : '';
          const field = (
            <label key={f.name} className={f.upload ? '' : wide}>
              {label}
              {options ? (
                <select value={String(v)} onChange={(e) => set(f.name, e.target.value)}>
                  {f.optional && <option value="">—</option>}
                  {options.map(([value, text]) => (
                    <option key={value} value={value}>
                      {text}
                    </option>
                  ))}
                </select>
              ) : f.kind === 'textarea' || f.kind === 'urls' ? (
                <textarea rows={f.kind === 'urls' ? 2 : 4} value={String(v)} placeholder={f.placeholder} onChange={(e) => set(f.name, e.target.value)} />
              ) : (
                <input type={f.kind === 'number' ? 'number' : f.kind === 'url' ? 'url' : 'text'} step="any" value={String(v)} placeholder={f.placeholder} onChange={(e) => set(f.name, e.target.value)} />
              )}
              {f.hint && <span className="hint">{f.hint}</span>}
            </label>
          );
          if (!f.upload) return field;
          return (
            <div key={f.name} className={`field ${wide}`}>
              {field}
              <FileDrop label={fileLabelOf(f.label)} kind={f.upload} multiple={f.kind === 'urls'} value={String(v)} onUploaded={uploaded(f)} />
            </div>
          );
        })}
      </div>
      <PriceAndSubmit create={create} label={config.submitLabel} />
      {result?.audio_url && (
        <div className="card shown" role="status">
          <p>
            Ready: {Math.round(result.duration * 10) / 10} s. <a href={result.audio_url} download>Download</a>
          </p>
          <audio src={result.audio_url} controls aria-label="Your voiceover" />
        </div>
      )}
    </form>
  );
}
