import { useState } from 'react';
import { gql, unwrap } from '../api/client.ts';
import { DELETE_GENERATION, DELETE_GENERATIONS, GENERATIONS_AT } from '../api/data-operations.ts';
import { Confirm, ErrorNote, when } from '../components/ui.tsx';
import { useAction } from '../components/use-action.ts';
import type { Generation } from './generation-types.ts';

export const PROCESSING_NOT_DELETABLE = 'Still processing: it can be deleted once it has ended (cancel it or wait).';

interface Deleted {
  deleted: number;
  skipped: number;
  not_found: number;
  has_more: boolean;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

function summary(r: Deleted): string {
  const parts = [`Deleted ${plural(r.deleted, 'generation')}.`];
  if (r.skipped) parts.push(`${plural(r.skipped, 'generation')} still processing ${r.skipped === 1 ? 'was' : 'were'} not deleted: cancel ${r.skipped === 1 ? 'it' : 'them'} or wait until ${r.skipped === 1 ? 'it ends' : 'they end'}.`);
  if (r.not_found) parts.push(`${r.not_found} ${r.not_found === 1 ? 'was' : 'were'} already gone.`);
  return parts.join(' ');
}

/** The files of a generation the team's retention period removed: said in words, no broken picture. */
export function FilesExpired({ at }: { at: string }) {
  return (
    <div className="placeholder expired" data-testid="files-expired">
      Files removed on {when(at)} by the team's retention period. The details stay.
    </div>
  );
}

/** One generation's delete, behind a confirmation; a processing one says why it cannot be deleted. */
export function DeleteGeneration({ g, compact, onDeleted }: { g: Generation; compact?: boolean; onDeleted: () => void }) {
  const [open, setOpen] = useState(false);
  const { busy, error, run } = useAction();
  const processing = g.status === 'processing';
  const hintId = `not-deletable-${g.id}`;
  return (
    <>
      <button type="button" className="danger" disabled={processing || busy} aria-describedby={processing ? hintId : undefined} onClick={() => setOpen(true)}>
        Delete
      </button>
      {processing && (
        <span id={hintId} className={compact ? 'visually-hidden' : 'hint'}>
          {PROCESSING_NOT_DELETABLE}
        </span>
      )}
      <ErrorNote error={error} />
      {open && (
        <Confirm
          open
          title="Delete this generation?"
          confirmLabel="Delete generation"
          danger
          onCancel={() => setOpen(false)}
          onConfirm={async () => {
            setOpen(false);
            const done = await run(async () => unwrap((await gql<{ deleteGeneration: any }>(DELETE_GENERATION, { id: g.id })).deleteGeneration));
            if (done) onDeleted();
          }}
        >
          <p>Its files and details are deleted for good. The credits it cost stay in the ledger.</p>
        </Confirm>
      )}
    </>
  );
}

/** The gallery's selected cards, deleted together (at most 100 ids a call, as the API takes). */
export function SelectionBar({ ids, onClear, onDone }: { ids: string[]; onClear: () => void; onDone: (message: string) => void }) {
  const [open, setOpen] = useState(false);
  const { busy, error, run } = useAction();
  if (ids.length === 0) return null;
  return (
    <div className="row wrap selection card" role="group" aria-label="Selection">
      <span className="grow">{plural(ids.length, 'generation')} selected</span>
      <button type="button" className="secondary" onClick={onClear}>
        Clear selection
      </button>
      <button type="button" className="danger" disabled={busy} onClick={() => setOpen(true)}>
        Delete selected
      </button>
      <ErrorNote error={error} />
      {open && (
        <Confirm
          open
          title={`Delete ${plural(ids.length, 'generation')}?`}
          confirmLabel={`Delete ${plural(ids.length, 'generation')}`}
          danger
          onCancel={() => setOpen(false)}
          onConfirm={async () => {
            setOpen(false);
            const total: Deleted = { deleted: 0, skipped: 0, not_found: 0, has_more: false };
            const r = await run(async () => {
              for (let i = 0; i < ids.length; i += 100) {
                const d = unwrap<Deleted>((await gql<{ deleteGenerations: any }>(DELETE_GENERATIONS, { ids: ids.slice(i, i + 100) })).deleteGenerations);
                total.deleted += d.deleted;
                total.skipped += d.skipped;
                total.not_found += d.not_found;
              }
              return total;
            });
            if (r) onDone(summary(r));
          }}
        >
          <p>Their files and details are deleted for good. The credits they cost stay in the ledger.</p>
        </Confirm>
      )}
    </div>
  );
}

type Filter = { type: string | null; status: string | null };

/**
 * How many of the filter's generations were created before `before` (all when null). The list is
 * newest first, so those are a tail of it: found by bisecting on the offset, one item a question.
 */
async function countMatching(f: Filter, before: Date | null): Promise<number> {
  const at = (offset: number) => gql<{ generations: { totalCount: number; items: { created_at: string }[] } }>(GENERATIONS_AT, { offset, ...f }).then((d) => d.generations);
  const first = await at(0);
  const total = first.totalCount;
  if (!before || total === 0) return total;
  const older = (p: { items: { created_at: string }[] }) => p.items.length > 0 && new Date(p.items[0]!.created_at) < before;
  if (older(first)) return total;
  // Invariant: the item at lo is not older; the one at hi is (hi = total: past the end).
  let lo = 0;
  let hi = total;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (older(await at(mid))) hi = mid;
    else lo = mid;
  }
  return total - hi;
}

/** Deletes everything the gallery's filters match, optionally only what was created before a day. */
export function BulkDelete({ type, status, onDone }: { type: string; status: string; onDone: (message: string) => void }) {
  const [before, setBefore] = useState('');
  const [ask, setAsk] = useState<{ deletable: number; processing: number } | null>(null);
  const { busy, error, run } = useAction();
  const beforeDate = before ? new Date(`${before}T00:00:00`) : null;
  const described = [type && `type ${type.replaceAll('_', ' ')}`, status && `status ${status}`, beforeDate && `created before ${beforeDate.toLocaleDateString()}`].filter(Boolean).join(', ');
  const count = () =>
    run(async () => {
      const all = await countMatching({ type: type || null, status: status || null }, beforeDate);
      const processing = status === 'processing' ? all : status ? 0 : await countMatching({ type: type || null, status: 'processing' }, beforeDate);
      setAsk({ deletable: all - processing, processing });
    });
  const remove = async () => {
    setAsk(null);
    const filter = { type: type || null, status: status || null, created_before: beforeDate?.toISOString() ?? null };
    const r = await run(async () => {
      const total: Deleted = { deleted: 0, skipped: 0, not_found: 0, has_more: false };
      // A call deletes at most 1,000: the rest is asked for again, a bounded number of times.
      for (let i = 0; i < 100; i++) {
        const d = unwrap<Deleted>((await gql<{ deleteGenerations: any }>(DELETE_GENERATIONS, { filter })).deleteGenerations);
        total.deleted += d.deleted;
        total.skipped = d.skipped;
        if (!d.has_more) break;
      }
      return total;
    });
    if (r) onDone(summary(r));
  };
  return (
    <details className="card bulk-delete">
      <summary>Delete in bulk</summary>
      <p className="hint">Deletes every generation the filters above match{described ? '' : ' (no filter: all of them)'}, optionally only older ones. Processing ones are never deleted.</p>
      <div className="row wrap">
        <label>
          Created before
          <input type="date" value={before} onChange={(e) => setBefore(e.target.value)} />
        </label>
        <button type="button" className="danger" disabled={busy} onClick={() => void count()}>
          Delete all matching…
        </button>
      </div>
      <ErrorNote error={error} />
      {ask && (
        <Confirm
          open
          title={ask.deletable === 0 ? 'Nothing to delete' : `Delete ${plural(ask.deletable, 'generation')}?`}
          confirmLabel={`Delete ${plural(ask.deletable, 'generation')}`}
          danger
          onCancel={() => setAsk(null)}
          onConfirm={() => void remove()}
        >
          <p>
            {plural(ask.deletable, 'generation')} {ask.deletable === 1 ? 'matches' : 'match'}
            {described ? ` (${described})` : ' (every generation of the team)'}: their files and details are deleted for good. The credits they cost stay in the ledger.
          </p>
          {ask.processing > 0 && <p>{plural(ask.processing, 'generation')} still processing {ask.processing === 1 ? 'is' : 'are'} not deleted: cancel or wait for them first.</p>}
        </Confirm>
      )}
    </details>
  );
}
