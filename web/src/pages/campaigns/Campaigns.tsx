import { parse } from 'csv-parse/browser/esm/sync';
import { stringify } from 'csv-stringify/browser/esm/sync';
import { useEffect, useState } from 'react';
import { gql, subscribe, unwrap } from '../../api/client.ts';
import { ADD_CAMPAIGN_ROWS, CAMPAIGN_ROWS, CAMPAIGN_UPDATED, CHECK_CAMPAIGN_ROWS, OPEN_CAMPAIGN, START_CAMPAIGN } from '../../api/operations.ts';
import { ErrorNote, Spinner } from '../../components/ui.tsx';
import { columnName } from '../../../../src/domain/campaign-rows.ts';
import { csvParseOptions, headerProblem, sniffText, toDataRow } from '../../../../src/domain/campaign-csv.ts';

const BATCH = 500;

interface Row {
  row_number: number;
  cells: Record<string, string>;
}
interface Checked {
  row_number: number;
  ok: boolean;
  type: string | null;
  credits: number | null;
  row_key: string | null;
  problems: { field: string; message: string }[];
}
interface CampaignView {
  id: string;
  name: string;
  status: string;
  finished: boolean;
  counts: { total: number; pending: number; submitted: number; processing: number; completed: number; failed: number; credits_estimate: number; credits_spent: number };
}
interface ResultRow {
  row_number: number;
  row_key: string | null;
  type: string;
  status: string;
  credits: number;
  generation_id: string | null;
  voiceover_id: string | null;
  result_url: string | null;
  error: string | null;
}

/**
 * A spreadsheet's rows as the server reads them, read as the campaign CLI reads a file: its
 * delimiter sniffed (comma, semicolon or tab; Excel's `sep=` line), column names trimmed and
 * lower-cased, empty cells left out, row 1 the header (checked), rows without a named cell skipped.
 */
export function rowsOfCsv(text: string): Row[] {
  const body = text.replace(/^\uFEFF/, '');
  const format = sniffText(body);
  const [header, ...data] = parse(body, csvParseOptions(format)) as string[][];
  if (!header) return [];
  const problem = headerProblem(header);
  if (problem) throw new Error(`The ${problem.replace(/^the /, '')}`);
  const columns = header.map(columnName);
  return data
    .map((values, i) => toDataRow(columns, values, i + 2, format.delimiter === ';'))
    .filter((r) => Object.keys(r.cells).length > 0)
    .map(({ row_number, cells }) => ({ row_number, cells }));
}

const chunks = <T,>(xs: T[], n: number): T[][] => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

/** Upload a CSV, see every row checked and priced by its endpoint's own rules, start it, watch it, download the results. */
export function Campaigns() {
  const [name, setName] = useState('');
  const [rows, setRows] = useState<Row[] | null>(null);
  const [checked, setChecked] = useState<Checked[] | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [campaign, setCampaign] = useState<CampaignView | null>(null);
  const [results, setResults] = useState<ResultRow[] | null>(null);

  async function read(file: File) {
    setError(null);
    setChecked(null);
    setCampaign(null);
    setResults(null);
    try {
      const parsed = rowsOfCsv(await file.text());
      setRows(parsed);
      setName((n) => n || file.name.replace(/\.csv$/i, ''));
      setBusy('Checking rows…');
      const all: Checked[] = [];
      for (const part of chunks(parsed, BATCH)) all.push(...(await gql<{ checkCampaignRows: Checked[] }>(CHECK_CAMPAIGN_ROWS, { rows: part })).checkCampaignRows);
      setChecked(all);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  }

  async function start() {
    if (!rows) return;
    setError(null);
    try {
      setBusy('Uploading rows…');
      const opened = unwrap((await gql<{ openCampaign: any }>(OPEN_CAMPAIGN, { name })).openCampaign) as { id: string };
      for (const part of chunks(rows, BATCH)) unwrap((await gql<{ addCampaignRows: any }>(ADD_CAMPAIGN_ROWS, { id: opened.id, rows: part })).addCampaignRows);
      setBusy('Starting…');
      unwrap((await gql<{ startCampaign: any }>(START_CAMPAIGN, { id: opened.id })).startCampaign);
      setCampaign({ id: opened.id, name, status: 'running', finished: false, counts: { total: rows.length, pending: rows.length, submitted: 0, processing: 0, completed: 0, failed: 0, credits_estimate: 0, credits_spent: 0 } });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  }

  useEffect(() => {
    if (!campaign || campaign.finished) return;
    return subscribe<{ campaignUpdated: CampaignView }>(CAMPAIGN_UPDATED, { id: campaign.id }, ({ campaignUpdated: c }) => setCampaign(c));
  }, [campaign?.id, campaign?.finished]);

  useEffect(() => {
    if (!campaign?.finished) return;
    (async () => {
      const all: ResultRow[] = [];
      for (let offset = 0; ; offset += 100) {
        const d = await gql<{ campaign: { rows: { items: ResultRow[]; totalCount: number } } }>(CAMPAIGN_ROWS, { id: campaign.id, limit: 100, offset });
        all.push(...d.campaign.rows.items);
        if (all.length >= d.campaign.rows.totalCount || d.campaign.rows.items.length === 0) break;
      }
      setResults(all);
    })().catch(setError);
  }, [campaign?.id, campaign?.finished]);

  const problems = checked?.filter((c) => !c.ok) ?? [];
  const total = checked?.reduce((a, c) => a + (c.credits ?? 0), 0) ?? 0;
  const c = campaign?.counts;
  const done = c ? c.completed + c.failed : 0;
  return (
    <section>
      <h1>Campaigns</h1>
      <p className="lead">
        A spreadsheet of ads, one per row: a <code>type</code> column (talking-avatar, ai-video, text-to-image, …) and the fields of that create. Every row is checked and priced before anything starts; each is charged once, however often you start.
      </p>
      <div className="card inline-form">
        <label>
          CSV file
          <input type="file" accept=".csv,text/csv" onChange={(e) => e.target.files?.[0] && read(e.target.files[0])} />
        </label>
        <label>
          Campaign name
          <input value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
        </label>
      </div>
      {busy && (
        <p role="status">
          <Spinner /> {busy}
        </p>
      )}
      <ErrorNote error={error} />
      {checked && !campaign && (
        <div className="card">
          <p role="status">
            {rows?.length} rows · {problems.length === 0 ? 'all fine' : `${problems.length} with problems`} · <strong data-testid="campaign-price">{total}</strong> credits
          </p>
          {problems.length > 0 && (
            <table>
              <thead>
                <tr>
                  <th>Row</th>
                  <th>Problem</th>
                </tr>
              </thead>
              <tbody>
                {problems.slice(0, 50).map((p) => (
                  <tr key={p.row_number}>
                    <td>{p.row_number}</td>
                    <td>{p.problems.map((x) => `${x.field}: ${x.message}`).join('; ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <button type="button" disabled={problems.length > 0 || !name.trim() || busy !== null} onClick={start}>
            Start campaign
          </button>
          {problems.length > 0 && <p className="hint">Fix these rows in the file and choose it again.</p>}
        </div>
      )}
      {campaign && c && (
        <div className="card" data-testid="campaign-progress" data-finished={campaign.finished}>
          <h2>{campaign.name}</h2>
          <div className="bar" role="progressbar" aria-valuemin={0} aria-valuemax={c.total} aria-valuenow={done} aria-label="Rows finished">
            <div className="fill" style={{ width: `${c.total ? (done / c.total) * 100 : 0}%` }} />
          </div>
          <p>
            {c.completed} completed · {c.failed} failed · {c.processing} processing · {c.pending} waiting · {c.credits_spent} credits spent
          </p>
          {campaign.finished && results && (
            <>
              <button type="button" onClick={() => download(campaign.name, results)}>
                Download results (CSV)
              </button>
              <table>
                <thead>
                  <tr>
                    <th>Row</th>
                    <th>Type</th>
                    <th>Status</th>
                    <th>Result</th>
                  </tr>
                </thead>
                <tbody>
                  {results.slice(0, 100).map((r) => (
                    <tr key={r.row_number}>
                      <td>{r.row_number}</td>
                      <td>{r.type}</td>
                      <td>{r.status}</td>
                      <td>{r.result_url ? <a href={r.result_url}>open</a> : (r.error ?? '')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </div>
      )}
    </section>
  );
}

function download(name: string, rows: ResultRow[]): void {
  const csv = stringify([
    ['row_number', 'row_key', 'type', 'status', 'credits', 'generation_id', 'result_url', 'error'],
    ...rows.map((r) => [r.row_number, r.row_key ?? '', r.type, r.status, r.credits, r.generation_id ?? r.voiceover_id ?? '', r.result_url ?? '', r.error ?? '']),
  ]);
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
  a.download = `${name}-results.csv`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
