import { useEffect, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { gql, unwrap } from '../api/client.ts';
import { CREDITS, TOP_UP_CREDITS } from '../api/operations.ts';
import { isOwner, useSession } from '../session.tsx';
import { Empty, ErrorNote, Spinner, when } from '../components/ui.tsx';
import { Pager } from '../components/Pager.tsx';
import { useAction } from '../components/use-action.ts';
import { TYPE_LABELS } from './generation-types.ts';
import { formatBytes } from '../../../src/domain/storage-quota.ts';

interface Balance {
  credits_used: number;
  credits_limit: number;
  credits_remaining: number;
}
interface Storage {
  outputs_bytes: number;
  inputs_bytes: number;
  uploads_bytes: number;
  total_bytes: number;
  quota_bytes: number | null;
}
interface Spend {
  day: string;
  kind: string;
  credits: number;
}
interface Line {
  id: string;
  kind: string;
  amount: number;
  generation_id: string | null;
  subject_type: string | null;
  note: string | null;
  created_at: string;
  credits_used_after: number;
}

const DAYS = 30;
const PAGE = 20;
const KIND_LABELS: Record<string, string> = { ...TYPE_LABELS, voiceover: 'Voiceovers', ad_library_scrape: 'Ad library scrapes' };

export function Credits() {
  const [offset, setOffset] = useState(0);
  const [data, setData] = useState<{ balance: Balance; storage: Storage; allowance: number | null; spend: Spend[]; lines: Line[]; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  const { session } = useSession();
  useEffect(() => {
    gql<{ credits: Balance; team: { storage: Storage }; topUpAllowance: number | null; spending: any; ledger: any }>(CREDITS, { days: DAYS, limit: PAGE, offset }).then((d) => {
      const ledger = unwrap(d.ledger) as { items: Line[]; totalCount: number };
      setData({ balance: d.credits, storage: d.team.storage, allowance: d.topUpAllowance, spend: unwrap(d.spending) as Spend[], lines: ledger.items, total: ledger.totalCount });
    }, setError);
  }, [offset, version]);
  if (error) return <ErrorNote error={error} />;
  if (!data) return <Spinner />;
  const { balance } = data;
  const used = balance.credits_limit > 0 ? Math.min(100, (balance.credits_used / balance.credits_limit) * 100) : 100;
  return (
    <section>
      <h1>Credits</h1>
      <div className="card">
        <div className="row">
          <strong className="grow" data-testid="credits-remaining">
            {balance.credits_remaining} credits left
          </strong>
          <span>
            {balance.credits_used} used of {balance.credits_limit}
          </span>
        </div>
        <div className="bar" role="meter" aria-valuemin={0} aria-valuemax={balance.credits_limit} aria-valuenow={balance.credits_used} aria-label="Credits used">
          <div className={used > 90 ? 'fill warn' : 'fill'} style={{ width: `${used}%` }} />
        </div>
        {data.allowance !== null ? (
          <TopUp allowance={data.allowance} onDone={() => setVersion(version + 1)} />
        ) : isOwner(session) ? (
          <p className="hint">Credits are added by the operator of this server.</p>
        ) : (
          <p className="hint">Your team's owners add credits.</p>
        )}
      </div>
      <StorageCard storage={data.storage} />
      <h2>Spend per day, last {DAYS} days</h2>
      {data.spend.length === 0 ? (
        <Empty title="Nothing spent in these 30 days">
          <p>
            <Link to="/create">Create something</Link> and its cost shows here by type.
          </p>
        </Empty>
      ) : (
        <SpendChart spend={data.spend} />
      )}
      <h2>Ledger</h2>
      {data.lines.length === 0 ? (
        <Empty title="No ledger lines yet" />
      ) : (
        <>
          <table className="ledger">
            <thead>
              <tr>
                <th>When</th>
                <th>What</th>
                <th className="num">Credits</th>
                <th className="num">Used after</th>
              </tr>
            </thead>
            <tbody>
              {data.lines.map((l) => (
                <tr key={l.id}>
                  <td>{when(l.created_at)}</td>
                  <td>
                    {l.kind.replace('_', ' ')}
                    {l.generation_id && (
                      <>
                        {' · '}
                        <Link to={`/generations/${l.generation_id}`}>generation</Link>
                      </>
                    )}
                    {l.subject_type && l.subject_type !== 'generation' && ` · ${l.subject_type.replace(/_/g, ' ')}`}
                    {l.note && ` · ${l.note}`}
                  </td>
                  <td className="num">{l.amount > 0 ? `−${l.amount}` : `+${-l.amount}`}</td>
                  <td className="num">{l.credits_used_after}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager offset={offset} shown={data.lines.length} total={data.total} pageSize={PAGE} onOffset={setOffset} />
        </>
      )}
    </section>
  );
}

/** Shown only when the server allows owners to add credits (topUpAllowance is not null). */
function TopUp({ allowance, onDone }: { allowance: number; onDone: () => void }) {
  const [credits, setCredits] = useState(Math.min(100, Math.max(1, allowance)));
  const { busy, error, run } = useAction();
  async function submit(e: FormEvent) {
    e.preventDefault();
    await run(async () => {
      unwrap((await gql<{ topUpCredits: any }>(TOP_UP_CREDITS, { credits })).topUpCredits);
      onDone();
    });
  }
  return (
    <form className="inline-form" onSubmit={submit} aria-label="Add credits">
      <label>
        Credits to add this period
        <input type="number" min={1} max={Math.max(1, Math.min(1000000, allowance))} required value={credits} onChange={(e) => setCredits(Number(e.target.value))} />
      </label>
      <span className="hint">{allowance} more can be added this period</span>
      <button type="submit" disabled={busy || allowance < 1}>
        Add credits
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

const COLOURS = 10;

/** Stacked bars, one per day, one colour per type; an SVG drawn here (no chart library for ~30 bars). */
function SpendChart({ spend }: { spend: Spend[] }) {
  const today = new Date();
  const days = Array.from({ length: DAYS }, (_, i) => new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - (DAYS - 1 - i))).toISOString().slice(0, 10));
  const kinds = [...new Set(spend.map((s) => s.kind))].sort();
  const byDay = new Map(days.map((d) => [d, new Map<string, number>()]));
  for (const s of spend) byDay.get(s.day)?.set(s.kind, Math.max(0, s.credits));
  const max = Math.max(1, ...[...byDay.values()].map((m) => [...m.values()].reduce((a, b) => a + b, 0)));
  const W = 600;
  const H = 160;
  const bw = W / DAYS;
  return (
    <figure className="card chart">
      <svg viewBox={`0 0 ${W} ${H + 16}`} role="img" aria-label="Credits spent per day by type">
        {days.map((d, i) => {
          let y = H;
          return (
            <g key={d}>
              {kinds.map((k, ki) => {
                const v = byDay.get(d)?.get(k) ?? 0;
                if (!v) return null;
                const h = (v / max) * (H - 4);
                y -= h;
                return (
                  <rect key={k} x={i * bw + 2} y={y} width={bw - 4} height={h} className={`k${ki % COLOURS}`}>
                    <title>{`${d} · ${KIND_LABELS[k] ?? k}: ${v} credits`}</title>
                  </rect>
                );
              })}
              {i % 7 === 0 && (
                <text x={i * bw + 2} y={H + 13} className="axis">
                  {d.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption className="legend">
        {kinds.map((k, ki) => (
          <span key={k}>
            <i className={`swatch k${ki % COLOURS}`} /> {KIND_LABELS[k] ?? k}: {spend.filter((s) => s.kind === k).reduce((a, s) => a + s.credits, 0)}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

/** The bytes the team stores, by kind, against its tier's quota when it has one. */
function StorageCard({ storage }: { storage: Storage }) {
  const quota = storage.quota_bytes;
  const used = quota ? Math.min(100, (storage.total_bytes / quota) * 100) : 0;
  return (
    <div className="card" aria-label="Storage">
      <div className="row">
        <strong className="grow" data-testid="storage-used">
          {formatBytes(storage.total_bytes)} stored
        </strong>
        {quota !== null && <span>of {formatBytes(quota)}</span>}
      </div>
      {quota !== null && (
        <div className="bar" role="meter" aria-valuemin={0} aria-valuemax={quota} aria-valuenow={storage.total_bytes} aria-label="Storage used">
          <div className={used > 90 ? 'fill warn' : 'fill'} style={{ width: `${used}%` }} />
        </div>
      )}
      <p className="hint">
        Results {formatBytes(storage.outputs_bytes)} · inputs (product and avatar images, kept copies) {formatBytes(storage.inputs_bytes)} · uploads {formatBytes(storage.uploads_bytes)}
        {quota !== null && storage.total_bytes >= quota && ' · the quota is used up: new uploads and generations are refused until something is deleted'}
      </p>
    </div>
  );
}
