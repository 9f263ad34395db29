import { useEffect, useState } from 'react';
import { gql } from '../../api/client.ts';
import { AUDIT_LOG } from '../../api/data-operations.ts';
import { MEMBERS } from '../../api/operations.ts';
import { Pager } from '../../components/Pager.tsx';
import { Empty, ErrorNote, Spinner, when } from '../../components/ui.tsx';
import { isOwner, useSession } from '../../session.tsx';
import { AUDIT_ACTIONS } from '../../../../src/domain/audit-actions.ts';
import { useListParams } from '../../components/use-list-params.ts';
import { useNewestOnly } from '../../components/newest-only.ts';

const PAGE = 50;


interface Actor {
  kind: string;
  email: string | null;
  key_hint: string | null;
  key_id: string | null;
  key_name: string | null;
  name: string | null;
  user_id: string | null;
}

interface Line {
  id: string;
  action: string;
  created_at: string;
  detail: Record<string, unknown>;
  ip: string | null;
  user_agent: string | null;
  actor: Actor;
}

const who = (a: Actor) =>
  a.kind === 'user' ? (a.email ?? 'a removed member') : a.kind === 'api_key' ? `API key ${a.key_name ? `“${a.key_name}” ` : ''}(${a.key_hint ?? '?'})` : (a.name ?? 'the operator (CLI)');

// "user:<id>" or "kind:<kind>": one select for a person, any key, or the operator.
const actorFilter = (v: string) => (v.startsWith('user:') ? { actor_id: v.slice(5) } : v.startsWith('kind:') ? { actor_kind: v.slice(5) } : {});

const iso = (local: string) => (local ? new Date(local).toISOString() : null);

/** Settings > Audit log (owners): who changed the team's access and money, what, when and from where. */
export function AuditLog() {
  const owner = isOwner(useSession().session);
  if (!owner)
    return (
      <section>
        <h1>Owners only</h1>
        <p>The audit log is read by your team's owners. Ask one of them (see Members).</p>
      </section>
    );
  return <AuditLogPage />;
}

function AuditLogPage() {
  const { filter, offset, setFilter: set, setOffset } = useListParams();
  const action = filter('action');
  const actor = filter('actor');
  const since = filter('since');
  const until = filter('until');
  const [page, setPage] = useState<{ items: Line[]; totalCount: number } | null>(null);
  const [members, setMembers] = useState<{ id: string; email: string }[]>([]);
  const [error, setError] = useState<unknown>(null);
  const newest = useNewestOnly();
  useEffect(() => {
    gql<{ members: { id: string; email: string }[] }>(MEMBERS).then((d) => setMembers(d.members), setError);
  }, []);
  useEffect(() => {
    setError(null);
    void newest(
      gql<{ auditLog: { items: Line[]; totalCount: number } }>(AUDIT_LOG, { action: action || null, ...actorFilter(actor), since: iso(since), until: iso(until), limit: PAGE, offset }),
      (d) => setPage(d.auditLog),
      setError,
    );
  }, [action, actor, since, until, offset, newest]);
  const filtered = action || actor || since || until;
  return (
    <section>
      <h1>Audit log</h1>
      <p className="lead">Every change to your team's access and money: keys, webhooks, members, sign-ins, credits, retention, bulk deletes, exports. Kept 400 days by default.</p>
      <div className="row wrap filters" role="group" aria-label="Filters">
        <label>
          Action
          <select value={action} onChange={(e) => set('action', e.target.value)}>
            <option value="">all</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          Actor
          <select value={actor} onChange={(e) => set('actor', e.target.value)}>
            <option value="">anyone</option>
            {members.map((m) => (
              <option key={m.id} value={`user:${m.id}`}>
                {m.email}
              </option>
            ))}
            <option value="kind:api_key">any API key</option>
            <option value="kind:operator">the operator (CLI)</option>
          </select>
        </label>
        <label>
          From
          <input type="datetime-local" value={since} onChange={(e) => set('since', e.target.value)} />
        </label>
        <label>
          Until
          <input type="datetime-local" value={until} onChange={(e) => set('until', e.target.value)} />
        </label>
      </div>
      <ErrorNote error={error} />
      {page === null ? (
        error ? null : <Spinner />
      ) : page.items.length === 0 ? (
        <Empty title={filtered ? 'Nothing matches these filters' : 'Nothing recorded yet'} />
      ) : (
        <>
          <div>
            <table>
              <caption className="visually-hidden">Audit log, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Action</th>
                  <th scope="col">Who</th>
                  <th scope="col">From</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((l) => (
                  <tr key={l.id} data-testid="audit-line" data-action={l.action}>
                    <td>{when(l.created_at)}</td>
                    <td>{l.action}</td>
                    <td>{who(l.actor)}</td>
                    <td title={l.user_agent ?? undefined}>{l.ip ?? '—'}</td>
                    <td className="audit-detail">
                      {Object.entries(l.detail)
                        .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
                        .join(', ') || '—'}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager offset={offset} shown={page.items.length} total={page.totalCount} pageSize={PAGE} onOffset={setOffset} />
        </>
      )}
    </section>
  );
}
