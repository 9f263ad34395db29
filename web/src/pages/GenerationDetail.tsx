import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { gql, subscribe } from '../api/client.ts';
import { GENERATION, GENERATION_UPDATED } from '../api/operations.ts';
import { DeliveryTable, type Delivery } from '../components/DeliveryTable.tsx';
import { Media } from '../components/Media.tsx';
import { ErrorNote, Spinner, when } from '../components/ui.tsx';
import { isOwner, useSession } from '../session.tsx';
import { DeleteGeneration, FilesExpired } from './generation-delete.tsx';
import { typeLabel, type Generation } from './generation-types.ts';
import { GenerationProgress } from './generation-progress.tsx';

/** Every field of GET /generations/{id}, its outputs, and the webhook attempts made for it. */
export function GenerationDetail() {
  const { id = '' } = useParams();
  const [g, setG] = useState<(Generation & { webhook_deliveries?: Delivery[] }) | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const owner = isOwner(useSession().session);
  const navigate = useNavigate();
  useEffect(() => {
    gql<{ generation: (Generation & { webhook_deliveries?: Delivery[] }) | null }>(GENERATION, { id, owner }).then((d) => setG(d.generation), setError);
    // This generation only: the server ends the stream once it has completed or failed.
    return subscribe<{ generationUpdated: Generation }>(GENERATION_UPDATED, { id }, ({ generationUpdated: u }) => setG((old) => (old ? { ...old, ...u } : old)));
  }, [id, owner]);
  if (error) return <ErrorNote error={error} />;
  if (g === undefined) return <Spinner />;
  if (g === null)
    return (
      <section>
        <h1>Not found</h1>
        <p>
          No generation {id} in your team. <Link to="/">Back to the gallery</Link>
        </p>
      </section>
    );
  const fields: [string, string][] = [
    ['id', g.id],
    ['type', g.type],
    ['status', g.status],
    ['credits', String(g.credits)],
    ['created_at', when(g.created_at)],
    ['completed_at', when(g.completed_at)],
    ['error', g.error ?? '—'],
    ...(g.files_expired_at ? ([['files_expired_at', when(g.files_expired_at)]] as [string, string][]) : []),
  ];
  const details = g.details.all ?? { prompt: g.details.prompt, model: g.details.model, aspect_ratio: g.details.aspect_ratio, quantity: g.details.quantity };
  return (
    <section>
      <p>
        <Link to="/">← Generations</Link>
      </p>
      <div className="row wrap">
        <h1 className="grow">
          {typeLabel(g.type)} <span className={`badge ${g.status}`}>{g.status}</span>
        </h1>
        <DeleteGeneration g={g} onDeleted={() => navigate('/', { replace: true })} />
      </div>
      <div className="outputs">
        {g.files_expired_at && <FilesExpired at={g.files_expired_at} />}
        {g.result_urls.map((u, i) => (
          <figure key={u}>
            <Media url={u} label={`output ${i + 1}`} />
            <figcaption>
              <a href={u} download>
                Download output {i + 1}
              </a>
            </figcaption>
          </figure>
        ))}
        {g.status === 'processing' && (
          <p>
            <Spinner /> Still making: this page updates by itself.
          </p>
        )}
        <GenerationProgress g={g} />
      </div>
      <dl className="facts card">
        {fields.map(([k, v]) => (
          <div key={k} className="fact">
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
        {Object.entries(details)
          .filter(([, v]) => v !== null && v !== undefined)
          .map(([k, v]) => (
            <div key={k} className="fact">
              <dt>{k}</dt>
              <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
            </div>
          ))}
      </dl>
      {g.webhook_deliveries && (
        <>
          <h2>Webhook deliveries</h2>
          {g.webhook_deliveries.length === 0 ? (
            <p className="hint">None: a generation made with an API key that has a webhook URL is reported to it when it ends.</p>
          ) : (
            <DeliveryTable deliveries={g.webhook_deliveries} showUrl />
          )}
        </>
      )}
    </section>
  );
}
