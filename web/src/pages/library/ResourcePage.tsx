import { useCallback, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import type { z } from 'zod';
import { gql, unwrap } from '../../api/client.ts';
import { FileDrop, fileLabelOf, type UploadKind } from '../../components/FileDrop.tsx';
import { Confirm, Empty, ErrorNote, Spinner } from '../../components/ui.tsx';
import { useAction } from '../../components/use-action.ts';
import { parseInput } from '../../../../src/domain/validate.ts';

export interface Field {
  name: string;
  label: string;
  type?: 'text' | 'url' | 'number' | 'textarea' | 'color' | 'select';
  options?: readonly string[];
  required?: boolean;
  placeholder?: string;
  /** A URL field whose file may be dropped or picked instead: the kind it takes. */
  upload?: UploadKind;
}

export interface ResourceConfig<T extends { id: string; name: string }> {
  title: string;
  lead: string;
  noun: string;
  emptyHint: ReactNode;
  fields: Field[];
  schema: z.ZodType;
  load: () => Promise<T[]>;
  create: { document: string; field: string; idempotent: boolean };
  remove: { document: string; field: string };
  render: (item: T) => ReactNode;
  /** Items that cannot be deleted here (the platform's avatars). */
  deletable?: (item: T) => boolean;
}

/** A team's library of one kind: list, create (checked by the API's schema as typed), delete with its 409 in words. */
export function ResourcePage<T extends { id: string; name: string }>({ config }: { config: ResourceConfig<T> }) {
  const [items, setItems] = useState<T[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [deleting, setDeleting] = useState<T | null>(null);
  const { error: removeError, run: remove } = useAction();
  const load = useCallback(() => config.load().then(setItems, setError), [config]);
  useEffect(() => void load(), [load]);
  return (
    <section>
      <h1>{config.title}</h1>
      <p className="lead">{config.lead}</p>
      <CreateForm config={config} onCreated={load} />
      <ErrorNote error={error} />
      <ErrorNote error={removeError} />
      {items === null ? (
        <Spinner />
      ) : items.length === 0 ? (
        <Empty title={`No ${config.noun}s yet`}>{config.emptyHint}</Empty>
      ) : (
        <ul className="gallery">
          {items.map((item) => (
            <li key={item.id} className="card generation" data-testid={config.noun}>
              {config.render(item)}
              {(config.deletable?.(item) ?? true) && (
                <div className="row end">
                  <button type="button" className="danger" onClick={() => setDeleting(item)}>
                    Delete
                  </button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      <Confirm
        open={deleting !== null}
        title={`Delete ${deleting?.name}?`}
        confirmLabel="Delete"
        danger
        onCancel={() => setDeleting(null)}
        onConfirm={() => {
          const item = deleting!;
          setDeleting(null);
          void remove(async () => {
            unwrap((await gql<Record<string, any>>(config.remove.document, { id: item.id }))[config.remove.field]);
            void load();
          });
        }}
      >
        <p>This cannot be undone.</p>
      </Confirm>
    </section>
  );
}

function CreateForm<T extends { id: string; name: string }>({ config, onCreated }: { config: ResourceConfig<T>; onCreated: () => void }) {
  const empty = () => Object.fromEntries(config.fields.map((f) => [f.name, '']));
  const [values, setValues] = useState<Record<string, string>>(empty);
  const { busy, error, run } = useAction();
  const key = useRef(crypto.randomUUID());
  const body = () => {
    const out: Record<string, unknown> = {};
    for (const f of config.fields) {
      const v = values[f.name]?.trim() ?? '';
      if (v !== '') out[f.name] = f.type === 'number' ? Number(v) : v;
    }
    return out;
  };
  async function submit(e: FormEvent) {
    e.preventDefault();
    await run(async () => {
      const input = body();
      parseInput(config.schema, input);
      const vars = config.create.idempotent ? { input, idempotencyKey: key.current } : { input };
      unwrap((await gql<Record<string, any>>(config.create.document, vars))[config.create.field]);
      key.current = crypto.randomUUID();
      setValues(empty());
      onCreated();
    });
  }
  return (
    <form className="card create-form" onSubmit={submit} aria-label={`New ${config.noun}`}>
      <div className="grid">
        {config.fields.map((f) => {
          const field = (
            <label key={f.name} className={f.type === 'textarea' ? 'wide' : ''}>
              {f.label}
              {f.required ? '' : ' (optional)'}
              {f.type === 'textarea' ? (
                <textarea rows={3} required={f.required} value={values[f.name]} placeholder={f.placeholder} onChange={(e) => setValues({ ...values, [f.name]: e.target.value })} />
              ) : f.type === 'select' ? (
                <select value={values[f.name]} onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}>
                  <option value="">—</option>
                  {f.options!.map((o) => (
                    <option key={o}>{o}</option>
                  ))}
                </select>
              ) : (
                <input type={f.type === 'url' ? 'url' : f.type === 'number' ? 'number' : 'text'} step="any" required={f.required} value={values[f.name]} placeholder={f.placeholder} onChange={(e) => setValues({ ...values, [f.name]: e.target.value })} />
              )}
            </label>
          );
          if (!f.upload) return field;
          return (
            <div key={f.name} className="field">
              {field}
              <FileDrop label={fileLabelOf(f.label)} kind={f.upload} value={values[f.name] ?? ''} onUploaded={(ref) => setValues((v) => ({ ...v, [f.name]: ref }))} />
            </div>
          );
        })}
      </div>
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Adding…' : `Add ${config.noun}`}
      </button>
    </form>
  );
}
