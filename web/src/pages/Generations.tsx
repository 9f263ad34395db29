import { useCallback, useEffect, useState } from 'react';
import { Link } from 'react-router';
import { gql, subscribe } from '../api/client.ts';
import { GENERATIONS, GENERATIONS_UPDATED } from '../api/operations.ts';
import { DemoBanner } from '../components/DemoBanner.tsx';
import { Media } from '../components/Media.tsx';
import { Pager } from '../components/Pager.tsx';
import { Empty, ErrorNote, Spinner, when } from '../components/ui.tsx';
import { BulkDelete, DeleteGeneration, FilesExpired, PROCESSING_NOT_DELETABLE, SelectionBar } from './generation-delete.tsx';
import { describe, typeLabel, type Generation } from './generation-types.ts';
import { GenerationProgress } from './generation-progress.tsx';
import { isImageOperation } from '../../../src/domain/generation-types.ts';
import { useListParams } from '../components/use-list-params.ts';
import { useNewestOnly } from '../components/newest-only.ts';

const PAGE = 24;

/** The team's generations, newest first; every card follows its generation live (graphql-ws). */
export function Generations() {
  const { filter, offset, setFilter: set, setOffset } = useListParams();
  const type = filter('type');
  const status = filter('status');
  const [page, setPage] = useState<{ items: Generation[]; totalCount: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [done, setDone] = useState<string | null>(null);
  const newest = useNewestOnly();
  const load = useCallback(
    () =>
      newest(
        gql<{ generations: { items: Generation[]; totalCount: number } }>(GENERATIONS, { limit: PAGE, offset, type: type || null, status: status || null }),
        (d) => setPage(d.generations),
        setError,
      ),
    [type, status, offset, newest],
  );
  useEffect(() => void load(), [load]);
  useEffect(() => setSelected(new Set()), [type, status, offset]);
  const afterDelete = (message: string) => {
    setDone(message);
    setSelected(new Set());
    void load();
  };
  const toggle = (id: string, on: boolean) =>
    setSelected((old) => {
      const next = new Set(old);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  useEffect(
    () =>
      subscribe<{ generationsUpdated: Generation }>(GENERATIONS_UPDATED, {}, ({ generationsUpdated: g }) => {
        setPage((p) => {
          if (!p) return p;
          const at = p.items.findIndex((x) => x.id === g.id);
          if (at >= 0) return { ...p, items: p.items.map((x) => (x.id === g.id ? g : x)) };
          // A new one (made here, by a key, or by a teammate) joins the first page if it matches the filters.
          const matches = offset === 0 && (!status || g.status === status) && (!type || matchesType(g.type, type));
          return matches ? { totalCount: p.totalCount + 1, items: [g, ...p.items].slice(0, PAGE) } : p;
        });
      }),
    [type, status, offset],
  );
  return (
    <section>
      <div className="row wrap">
        <h1 className="grow">Generations</h1>
        <Link className="button" to="/create">
          Create
        </Link>
      </div>
      <DemoBanner />
      <div className="row wrap filters" role="group" aria-label="Filters">
        <label>
          Type
          <select value={type} onChange={(e) => set('type', e.target.value)}>
            <option value="">all</option>
            <option value="image">images</option>
            <option value="ai_video">AI videos</option>
            <option value="talking_avatar">talking avatars</option>
          </select>
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => set('status', e.target.value)}>
            <option value="">all</option>
            <option value="processing">processing</option>
            <option value="completed">completed</option>
            <option value="failed">failed</option>
          </select>
        </label>
      </div>
      <BulkDelete type={type} status={status} onDone={afterDelete} />
      {done && (
        <p className="notice" role="status">
          {done}
        </p>
      )}
      <ErrorNote error={error} />
      {page === null ? (
        <Spinner />
      ) : page.items.length === 0 ? (
        <Empty title={type || status ? 'Nothing matches these filters' : 'No generations yet'}>
          <p>
            <Link to="/create">Create an image or a video</Link>: it appears here and updates by itself when it is ready.
          </p>
        </Empty>
      ) : (
        <>
          <SelectionBar ids={[...selected].filter((id) => page.items.some((g) => g.id === id))} onClear={() => setSelected(new Set())} onDone={afterDelete} />
          <ul className="gallery">
            {page.items.map((g) => (
              <GenerationCard key={g.id} g={g} selected={selected.has(g.id)} onSelect={(on) => toggle(g.id, on)} onDeleted={() => afterDelete('Generation deleted.')} />
            ))}
          </ul>
          <Pager offset={offset} shown={page.items.length} total={page.totalCount} pageSize={PAGE} onOffset={setOffset} />
        </>
      )}
    </section>
  );
}

// The filter takes GraphQL's enum names (ai_video), the generation its API type (ai-video).
const matchesType = (t: string, filter: string) => (filter === 'image' ? isImageOperation(t) : t.replaceAll('-', '_') === filter);

export function GenerationCard({ g, selected, onSelect, onDeleted }: { g: Generation; selected?: boolean; onSelect?: (on: boolean) => void; onDeleted?: () => void }) {
  const processing = g.status === 'processing';
  return (
    <li className="card generation" data-testid="generation-card" data-id={g.id} data-status={g.status}>
      <div className="thumb">
        {g.files_expired_at ? (
          <FilesExpired at={g.files_expired_at} />
        ) : g.status === 'completed' && g.result_url ? (
          <Media url={g.result_url} label={`${typeLabel(g.type)} result`} />
        ) : g.status === 'processing' ? (
          <div className="placeholder">
            <Spinner /> making…
            <GenerationProgress g={g} />
          </div>
        ) : (
          <div className="placeholder failed">{g.error ?? 'failed'}</div>
        )}
      </div>
      <div className="row">
        <span className={`badge ${g.status}`}>{g.status}</span>
        <span className="grow">{typeLabel(g.type)}</span>
        <span className="hint">{g.credits} cr</span>
      </div>
      <p className="caption">{describe(g)}</p>
      <div className="row">
        <span className="hint grow">{when(g.created_at)}</span>
        <Link to={`/generations/${g.id}`}>Details</Link>
      </div>
      {onSelect && (
        <div className="row">
          <label className="check grow" title={processing ? PROCESSING_NOT_DELETABLE : undefined}>
            <input type="checkbox" checked={!!selected} disabled={processing} onChange={(e) => onSelect(e.target.checked)} /> Select
          </label>
          <DeleteGeneration g={g} compact onDeleted={() => onDeleted?.()} />
        </div>
      )}
    </li>
  );
}
