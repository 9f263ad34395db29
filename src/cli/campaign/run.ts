import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { ApiError, createApiClient, graphqlEndpoint, loadCa, type ApiClient } from './api.ts';
import { batches } from './batches.ts';
import type { DataRow } from '../../domain/campaign-csv.ts';
import { openCsv, type CsvFile } from './csv-read.ts';
import { CliError, EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './errors.ts';
import { followCampaign } from './follow.ts';
import { addRows, balance, checkRows, openCampaign, rowsPage, startCampaign, ROWS_PAGE, type CampaignRowResult, type CampaignState, type RowInput } from './server-calls.ts';
import { findLocalFiles, sizeWords, uploadLocalFiles, withUploads } from './local-files.ts';
import { createProgress } from './progress.ts';
import { writeResults } from './results.ts';

export interface RunOptions {
  apiUrl?: string;
  apiKey?: string;
  name?: string;
  out?: string;
  ca?: string;
  dryRun?: boolean;
  yes?: boolean;
}

export interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
}

/** Problems kept for the report; past this only their number is kept, so memory stays flat. */
const MAX_PROBLEMS_KEPT = 1000;

export interface Problem {
  row_number: number;
  field: string;
  message: string;
}

export interface CheckSummary {
  /** Rows with something in them. */
  rows: number;
  valid: number;
  invalid: number;
  credits: number;
  byType: Map<string, { rows: number; credits: number }>;
  problems: Problem[];
  /** Problems past MAX_PROBLEMS_KEPT. */
  moreProblems: number;
}

/** `campaign.csv` -> `campaign` (the default campaign name). */
export const defaultName = (file: string): string => path.parse(file).name;
/** `dir/campaign.csv` -> `dir/campaign.results.csv`. */
export const defaultOut = (file: string): string => {
  const p = path.parse(path.resolve(file));
  return path.join(p.dir, `${p.name}.results.csv`);
};

/** What the server gets of a row's cells (local file paths replaced by their uploads). */
type Cells = (cells: Record<string, string>) => Record<string, string>;
const asWritten: Cells = (cells) => cells;
const rowInput = (r: DataRow, cells: Cells = asWritten): RowInput => ({ row_number: r.row_number, cells: cells(r.cells) });
const jsonSizeOf = (cells: Cells) => (r: DataRow) => Buffer.byteLength(JSON.stringify(rowInput(r, cells)));

async function* nonBlank(csv: CsvFile): AsyncGenerator<DataRow> {
  for await (const r of csv.rows()) if (!r.blank) yield r;
}

/** A ratio a spreadsheet read as a time of day (16:9 -> 16:09:00 or 04:09 PM): worth a hint. */
const TIME_LIKE = /^\s*\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*([AP]\.?M\.?)?\s*$/i;
function withHint(field: string, message: string, cells: Record<string, string>): string {
  const cell = cells[field];
  if (field === 'aspect_ratio' && cell && TIME_LIKE.test(cell) && /:\d{2}:|[AP]\.?M/i.test(cell)) {
    return `${message} (the cell holds "${cell.trim()}": the spreadsheet turned the ratio into a time; format the column as text and type it again)`;
  }
  return message;
}

/** Pass 1: every row checked and priced by the server (nothing stored, nothing charged), in batches. */
export async function checkFile(api: ApiClient, csv: CsvFile, cells: Cells = asWritten): Promise<CheckSummary> {
  const s: CheckSummary = { rows: 0, valid: 0, invalid: 0, credits: 0, byType: new Map(), problems: [], moreProblems: 0 };
  const addProblem = (p: Problem) => {
    if (s.problems.length < MAX_PROBLEMS_KEPT) s.problems.push(p);
    else s.moreProblems++;
  };
  for await (const batch of batches(nonBlank(csv), jsonSizeOf(cells))) {
    const checked = await checkRows(api, batch.map((r) => rowInput(r, cells)));
    const byNumber = new Map(checked.map((c) => [c.row_number, c]));
    for (const row of batch) {
      s.rows++;
      const c = byNumber.get(row.row_number);
      const problems = [...row.problems, ...(c && !c.ok ? c.problems : [])];
      if (!c) problems.push({ field: 'type', message: 'was not checked by the server' });
      if (problems.length) {
        s.invalid++;
        for (const p of problems) addProblem({ row_number: row.row_number, field: p.field, message: withHint(p.field, p.message, row.cells) });
        continue;
      }
      s.valid++;
      const credits = c!.credits ?? 0;
      s.credits += credits;
      const t = s.byType.get(c!.type ?? '?') ?? { rows: 0, credits: 0 };
      t.rows++;
      t.credits += credits;
      s.byType.set(c!.type ?? '?', t);
    }
  }
  return s;
}

/** Every row of a campaign in row order, a page of 100 at a time. */
export async function* campaignRows(api: ApiClient, id: string): AsyncGenerator<CampaignRowResult> {
  for (let offset = 0; ; offset += ROWS_PAGE) {
    const page = await rowsPage(api, id, offset);
    yield* page.items;
    if (page.items.length < ROWS_PAGE || offset + ROWS_PAGE >= page.totalCount) return;
  }
}

/** y/yes submits; anything else, end of input or Ctrl-C, does not. */
async function confirm(io: Io, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stdout });
  const abort = new AbortController();
  rl.on('SIGINT', () => abort.abort());
  rl.on('close', () => abort.abort());
  try {
    const answer = await rl.question(question, { signal: abort.signal });
    return /^y(es)?$/i.test(answer.trim());
  } catch {
    io.stdout.write('\n');
    return false;
  } finally {
    rl.close();
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `adforge campaign run FILE`: the whole flow; resolves with the exit status. */
export async function runCampaign(file: string | undefined, o: RunOptions, io: Io): Promise<number> {
  const out = (s: string) => io.stdout.write(`${s}\n`);
  const warn = (s: string) => io.stderr.write(`adforge: ${s}\n`);

  if (!file) throw new CliError(EXIT_USAGE, 'name the CSV file to run');
  const apiUrl = o.apiUrl ?? io.env.ADFORGE_API_URL;
  const apiKey = o.apiKey ?? io.env.ADFORGE_API_KEY;
  if (!apiUrl) throw new CliError(EXIT_USAGE, 'no API URL: pass --api-url https://HOST:PORT or set ADFORGE_API_URL');
  if (!apiKey) throw new CliError(EXIT_USAGE, 'no API key: pass --api-key or set ADFORGE_API_KEY');
  const endpoint = graphqlEndpoint(apiUrl);
  const ca = await loadCa(o.ca);
  const name = (o.name ?? defaultName(file)).trim();
  if (!name) throw new CliError(EXIT_USAGE, '--name: must not be empty');
  const outFile = path.resolve(o.out ?? defaultOut(file));
  if (outFile === path.resolve(file)) throw new CliError(EXIT_USAGE, '--out: must not be the input file');
  const csv = await openCsv(file);

  const api = createApiClient({ endpoint, key: apiKey, ca });
  try {
    // 0. Local files named in URL columns: uploaded once per content (uploads cost no credits and expire unused).
    const local = await findLocalFiles(csv, file);
    const cells: Cells = (c) => withUploads(local, c);
    if (local.byHash.size > 0) {
      const bytes = [...local.byHash.values()].reduce((n, f) => n + f.size, 0);
      out(`local files: ${plural(local.byHash.size, 'file')} to upload (${sizeWords(bytes)}), once each by content`);
      await uploadLocalFiles(local, { endpoint, key: apiKey, ca });
      out(`uploaded: ${plural(local.byHash.size, 'file')} (${sizeWords(bytes)}); the rows name them as upload:<id>`);
    }

    // 1. Every row checked by the server's own rules before anything is stored or charged.
    const check = await checkFile(api, csv, cells);
    if (check.rows === 0) throw new CliError(EXIT_USAGE, `${file} has no rows to run (only the header)`);
    if (check.invalid > 0) {
      for (const p of check.problems) io.stderr.write(`  row ${p.row_number}  ${p.field}: ${p.message}\n`);
      if (check.moreProblems) io.stderr.write(`  ... and ${plural(check.moreProblems, 'more problem')}\n`);
      throw new CliError(EXIT_USAGE, `${check.invalid} of ${plural(check.rows, 'row')} ${check.invalid === 1 ? 'is' : 'are'} invalid; nothing was submitted`);
    }

    // 2. The price against the balance.
    const bal = await balance(api);
    out(`${plural(check.rows, 'row')} checked, all valid`);
    const typeWidth = Math.max(...[...check.byType.keys()].map((t) => t.length));
    for (const [type, t] of [...check.byType].sort(([a], [b]) => a.localeCompare(b))) {
      out(`  ${type.padEnd(typeWidth)}  ${plural(t.rows, 'row').padStart(9)}  ${String(t.credits).padStart(7)} credits`);
    }
    out(`total: ${check.credits} credits; balance: ${bal.credits_remaining} credits remaining (limit ${bal.credits_limit}, used ${bal.credits_used})`);
    if (check.credits > bal.credits_remaining) {
      warn(`the balance does not cover the whole file (rows already submitted by an earlier run of campaign "${name}" are not charged again)`);
    }
    if (o.dryRun) {
      out('dry run: nothing was submitted');
      return EXIT_OK;
    }

    // 3. Confirmation, on a terminal only.
    if (!o.yes && io.stdin.isTTY && io.stdout.isTTY) {
      if (!(await confirm(io, `Run campaign "${name}": ${plural(check.rows, 'row')} for up to ${check.credits} credits? [y/N] `))) {
        out('cancelled: nothing was submitted');
        return EXIT_FAILED;
      }
    }

    // 4-6. The campaign (the same name continues it), its rows, the start, progress, results.
    const campaign = await openCampaign(api, name);
    try {
      return await submitFollowAndWrite({ api, csv, check, campaign, outFile, io, cells });
    } catch (e) {
      // Lost contact once the campaign exists: what the server has is kept, and a re-run picks it up.
      if (e instanceof ApiError && (e.code === 'network_error' || e.code === 'http_error')) {
        throw new ApiError(e.code, `${e.message}\nRun the same command again (same --name) to continue where it stopped: no row is submitted or charged twice.`);
      }
      throw e;
    }
  } finally {
    await api.close();
  }
}

async function submitFollowAndWrite(ctx: { api: ApiClient; csv: CsvFile; check: CheckSummary; campaign: CampaignState; outFile: string; io: Io; cells: Cells }): Promise<number> {
  const { api, csv, check, outFile, io, cells } = ctx;
  const out = (s: string) => io.stdout.write(`${s}\n`);
  const warn = (s: string) => io.stderr.write(`adforge: ${s}\n`);
  let campaign = ctx.campaign;
  if (campaign.counts.total > 0) {
    out(`continuing campaign "${campaign.name}" (${campaign.id}): ${campaign.counts.submitted} of ${plural(campaign.counts.total, 'row')} already submitted`);
  } else {
    out(`campaign "${campaign.name}" (${campaign.id})`);
  }
  if (campaign.finished && campaign.counts.total === check.rows) {
    out('the campaign has already finished: writing its results');
  } else {
    // 4. The rows again, in batches: rows an earlier run submitted are kept by the server, not sent twice.
    let stored = 0;
    let kept = 0;
    let changed = 0;
    for await (const batch of batches(nonBlank(csv), jsonSizeOf(cells))) {
      const r = await addRows(api, campaign.id, batch.map((row) => rowInput(row, cells)));
      stored += r.stored;
      kept += r.kept;
      changed += r.changed;
    }
    out(`rows sent: ${stored} stored${kept ? `, ${kept} kept as an earlier run submitted them (not charged again)` : ''}`);
    if (changed) {
      out(`warning: ${plural(changed, 'row')} already submitted in campaign "${campaign.name}" now read differently in this file; they keep what was submitted (use another --name for a different file)`);
    }
    try {
      campaign = await startCampaign(api, campaign.id);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'insufficient_credits') throw new CliError(EXIT_FAILED, `${e.message}; nothing was started`);
      throw e;
    }
    out(`started: ${plural(campaign.counts.pending, 'row')} to submit`);

    // 5. Progress until every row has finished.
    campaign = await follow(api, campaign, io);
  }

  // 6. The results file.
  const summary = await writeResults(csv, outFile, campaignRows(api, campaign.id));
  out(`finished: ${summary.completed} completed, ${summary.failed} failed${summary.deleted ? `, ${summary.deleted} deleted since` : ''}${summary.other ? `, ${summary.other} not finished` : ''}; ${campaign.counts.credits_spent} credits spent`);
  out(`results: ${outFile}`);
  for (const f of summary.failures) warn(`row ${f.row_number}${f.row_key ? ` (${f.row_key})` : ''}: ${f.error}`);
  if (summary.failures.length < summary.rows - summary.completed - summary.deleted) warn(`... and more: see ${outFile}`);
  return summary.completed === summary.rows ? EXIT_OK : EXIT_FAILED;
}

/** Live progress from the subscription (polling when it drops); Ctrl-C leaves the campaign running on the server. */
async function follow(api: ApiClient, started: CampaignState, io: Io): Promise<CampaignState> {
  const tty = Boolean(io.stdout.isTTY);
  const progress = createProgress({ tty, stream: io.stdout });
  progress.update(started.counts);
  const following = followCampaign(api, started.id, {
    onUpdate: (c) => progress.update(c.counts),
    onNotice: (m) => {
      if (tty) progress.stop();
      io.stderr.write(`adforge: ${m}\n`);
    },
  });
  const onSigint = () => {
    following.stop();
    progress.stop();
    io.stderr.write(
      `\nadforge: stopped following; the campaign keeps running on the server. Run the same command again ` +
        `(same --name) to follow it and write the results.\n`,
    );
    process.exit(130);
  };
  process.once('SIGINT', onSigint);
  try {
    const done = await following.done;
    progress.stop();
    return done;
  } catch (e) {
    progress.stop();
    throw e;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}
