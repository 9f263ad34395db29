import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { gql, unwrap } from '../../api/client.ts';
import { DELETE_TEAM, DOWNLOAD_TEAM_EXPORT, SET_TEAM_RETENTION, START_TEAM_EXPORT, TEAM_EXPORT, TEAM_EXPORTS, TEAM_RETENTION } from '../../api/data-operations.ts';
import { ErrorNote, Spinner, when } from '../../components/ui.tsx';
import { useAction } from '../../components/use-action.ts';
import { isOwner, useSession } from '../../session.tsx';

interface Retention {
  days: number | null;
  team_days: number | null;
  server_days: number | null;
}

interface TeamExport {
  id: string;
  status: 'processing' | 'completed' | 'failed';
  created_at: string;
  completed_at: string | null;
  size: number | null;
  error: string | null;
  downloaded_at: string | null;
  available_until: string | null;
}

/** Settings > Team data: how long files are kept, an export of everything, and deleting the team. */
export function TeamData() {
  const owner = isOwner(useSession().session);
  return (
    <section>
      <h1>Team data</h1>
      <p className="lead">How long your generated files are kept{owner ? ', a copy of everything your team has here, and deleting the team for good' : ''}.</p>
      <RetentionSetting owner={owner} />
      {owner ? (
        <>
          <ExportEverything />
          <DeleteTeam />
        </>
      ) : (
        <p className="hint">Exporting the team's data and deleting the team are for your team's owners.</p>
      )}
    </section>
  );
}

const kept = (days: number | null) => (days === null ? 'kept until you delete them' : `kept ${days} day${days === 1 ? '' : 's'}, then removed`);

function RetentionSetting({ owner }: { owner: boolean }) {
  const [r, setR] = useState<Retention | null>(null);
  const [days, setDays] = useState('');
  const [saved, setSaved] = useState(false);
  const { busy, error, setError, run } = useAction();
  useEffect(() => {
    gql<{ team: { retention: Retention } }>(TEAM_RETENTION).then((d) => {
      setR(d.team.retention);
      setDays(d.team.retention.team_days === null ? '' : String(d.team.retention.team_days));
    }, setError);
  }, [setError]);
  const save = async (value: number | null) => {
    setSaved(false);
    const next = await run(async () => unwrap<Retention>((await gql<{ setTeamRetention: any }>(SET_TEAM_RETENTION, { days: value })).setTeamRetention));
    if (next) {
      setR(next);
      setDays(next.team_days === null ? '' : String(next.team_days));
      setSaved(true);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save(days.trim() === '' ? null : Number(days));
  };
  return (
    <div className="card">
      <h2>Retention</h2>
      {r === null ? (
        error ? null : <Spinner />
      ) : (
        <>
          <p data-testid="retention">Generated files are {kept(r.days)}.</p>
          <p className="hint">
            {r.server_days === null ? 'This server keeps files forever unless your team sets a period.' : `This server keeps files at most ${r.server_days} days; your team may choose fewer.`} When the files of a
            generation are removed, the generation itself stays with its details and cost.
          </p>
          {owner ? (
            <form className="inline-form" onSubmit={submit} aria-label="Retention">
              <label>
                Keep generated files for (days)
                <input type="number" min={1} max={r.server_days ?? 36500} value={days} placeholder={r.server_days === null ? 'forever' : String(r.server_days)} onChange={(e) => setDays(e.target.value)} />
              </label>
              <button type="submit" disabled={busy}>
                Save retention
              </button>
              {r.team_days !== null && (
                <button type="button" className="secondary" disabled={busy} onClick={() => void save(null)}>
                  Use the server's setting
                </button>
              )}
            </form>
          ) : (
            <p className="hint">Only your team's owners can change it.</p>
          )}
          {saved && <p role="status">Retention saved.</p>}
        </>
      )}
      <ErrorNote error={error} />
    </div>
  );
}

/** Hands the browser the export's one-time link as a download. */
function download(url: string) {
  const a = document.createElement('a');
  a.href = url;
  a.download = '';
  document.body.append(a);
  a.click();
  a.remove();
}

function ExportEverything() {
  const [latest, setLatest] = useState<TeamExport | null | undefined>(undefined);
  const { busy, error, setError, run } = useAction();
  const load = useCallback(() => gql<{ teamExports: TeamExport[] }>(TEAM_EXPORTS).then((d) => setLatest(d.teamExports[0] ?? null), setError), [setError]);
  useEffect(() => void load(), [load]);
  // While the archive is being made, its state is read again every two seconds.
  useEffect(() => {
    if (latest?.status !== 'processing') return;
    const t = setTimeout(() => {
      gql<{ teamExport: TeamExport | null }>(TEAM_EXPORT, { id: latest.id }).then((d) => d.teamExport && setLatest(d.teamExport), setError);
    }, 2000);
    return () => clearTimeout(t);
  }, [latest, setError]);
  const start = () => run(async () => setLatest(unwrap<TeamExport>((await gql<{ startTeamExport: any }>(START_TEAM_EXPORT)).startTeamExport)));
  const fetchArchive = (id: string) =>
    run(async () => {
      const link = unwrap<{ url: string }>((await gql<{ downloadTeamExport: any }>(DOWNLOAD_TEAM_EXPORT, { id })).downloadTeamExport);
      download(link.url);
      setLatest((old) => (old ? { ...old, downloaded_at: new Date().toISOString() } : old));
    });
  return (
    <div className="card">
      <h2>Export</h2>
      <p className="hint">
        One archive (.tar.gz) of everything: generations with their files, the ledger as CSV, products, brands, avatars, campaigns, members, API keys (hints only, never secrets) and webhook
        deliveries. Its download link is handed out once.
      </p>
      <button type="button" disabled={busy || latest?.status === 'processing'} onClick={() => void start()}>
        Export everything
      </button>
      {latest && (
        <div className="row wrap" role="status" data-testid="team-export" data-status={latest.status}>
          {latest.status === 'processing' && (
            <span>
              <Spinner /> Making the archive (started {when(latest.created_at)})…
            </span>
          )}
          {latest.status === 'failed' && <span className="problem">The export failed: {latest.error ?? 'try again'}</span>}
          {latest.status === 'completed' &&
            (latest.downloaded_at ? (
              <span>Archive of {when(latest.created_at)}: its link was handed out {when(latest.downloaded_at)}. Start a new export for another copy.</span>
            ) : (
              <>
                <span>
                  Archive ready ({formatBytes(latest.size)}), until {when(latest.available_until)}.
                </span>
                <button type="button" disabled={busy} onClick={() => void fetchArchive(latest.id)}>
                  Download archive
                </button>
              </>
            ))}
        </div>
      )}
      <ErrorNote error={error} />
    </div>
  );
}

const formatBytes = (n: number | null) => (n === null ? '—' : n < 1024 * 1024 ? `${Math.max(1, Math.round(n / 1024))} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

function DeleteTeam() {
  const { session } = useSession();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const { busy, error, setError, run } = useAction();
  const name = session?.team.name ?? '';
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const done = await run(async () => unwrap((await gql<{ deleteTeam: any }>(DELETE_TEAM, { confirm_name: typed })).deleteTeam));
    // Every session of the team has ended, this one included: start again from the sign-in page.
    if (done) location.assign('/sign-in');
  };
  return (
    <div className="card danger-zone">
      <h2>Delete this team</h2>
      <p className="hint">
        Every API key and session ends at once, generations still being made are cancelled, and every row and file of the team is deleted. Only the ledger's lines and the audit log stay, for the
        operator's accounts. Export first if you want a copy.
      </p>
      {!open ? (
        <button type="button" className="danger" onClick={() => (setOpen(true), setError(null))}>
          Delete this team…
        </button>
      ) : (
        <form className="inline-form" onSubmit={submit} aria-label="Delete this team">
          <label>
            Type the team's name ({name}) to confirm
            <input value={typed} autoComplete="off" onChange={(e) => setTyped(e.target.value)} />
          </label>
          <button type="button" className="secondary" onClick={() => (setOpen(false), setTyped(''))}>
            Cancel
          </button>
          <button type="submit" className="danger" disabled={busy || typed === ''}>
            Delete the team for good
          </button>
        </form>
      )}
      <ErrorNote error={error} />
    </div>
  );
}
