import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { columnName } from '../../domain/campaign-rows.ts';
import type { DataRow } from '../../domain/campaign-csv.ts';
import type { CsvFile } from './csv-read.ts';
import type { CampaignRowResult } from './server-calls.ts';

/** What each input row gains in the results file, after the input's own columns. */
export const RESULT_COLUMNS = ['generation_id', 'status', 'credits', 'result_url', 'error'] as const;

/**
 * The names of the result columns for a file with these column names: a name the input already
 * uses (a video-edit file has its own `generation_id` column) gets a `result_` prefix instead.
 */
export function resultColumnNames(columns: readonly string[]): string[] {
  const taken = new Set(columns.map(columnName));
  return RESULT_COLUMNS.map((c) => {
    let name: string = c;
    for (let i = 2; taken.has(name); i++) name = i === 2 ? `result_${c}` : `result_${c}_${i - 1}`;
    taken.add(name);
    return name;
  });
}

/** A row's result cells; a text-to-speech row's voiceover id goes in `generation_id`. */
export function resultCells(r: CampaignRowResult | undefined): string[] {
  if (!r) return ['', 'missing', '', '', 'the campaign has no such row (was the file changed?)'];
  return [r.generation_id ?? r.voiceover_id ?? '', r.status, String(r.credits), r.result_url ?? '', r.error ?? ''];
}

export interface ResultsSummary {
  /** Rows with something to run (blank rows not counted). */
  rows: number;
  completed: number;
  failed: number;
  /** Ended, then deleted by the team since (the row still names its generation). */
  deleted: number;
  /** Neither completed, failed nor deleted (still pending or processing, or missing). */
  other: number;
  /** The first failed rows, for the report. */
  failures: { row_number: number; row_key: string | null; error: string }[];
}

const MAX_FAILURES_KEPT = 20;

/**
 * Merges two streams ordered by row number, the file's rows (read again) and the campaign's rows
 * (paged from the server), into one output record per input row: the input's fields as read, then
 * the result columns. Blank input rows stay blank, so row N of the results is row N of the input.
 */
export async function* mergeResults(
  header: readonly string[],
  fileRows: AsyncIterable<DataRow>,
  serverRows: AsyncIterable<CampaignRowResult>,
  summary: ResultsSummary,
): AsyncGenerator<string[]> {
  yield [...header, ...resultColumnNames(header)];
  const server = serverRows[Symbol.asyncIterator]();
  let next: CampaignRowResult | undefined;
  let exhausted = false;
  const advance = async () => {
    const r = await server.next();
    next = r.done ? undefined : r.value;
    exhausted = Boolean(r.done);
  };
  await advance();
  const width = header.length;
  for await (const row of fileRows) {
    // Spreadsheets drop trailing empty cells or add empty ones: every record gets the header's width.
    const values = row.values.length >= width ? row.values.slice(0, width) : [...row.values, ...Array<string>(width - row.values.length).fill('')];
    if (row.blank) {
      yield [...values, ...RESULT_COLUMNS.map(() => '')];
      continue;
    }
    while (!exhausted && next && next.row_number < row.row_number) await advance();
    const match = next && next.row_number === row.row_number ? next : undefined;
    summary.rows++;
    if (match?.status === 'completed') summary.completed++;
    else if (match?.status === 'failed') summary.failed++;
    else if (match?.status === 'deleted') summary.deleted++;
    else summary.other++;
    if (match?.status !== 'completed' && match?.status !== 'deleted' && summary.failures.length < MAX_FAILURES_KEPT) {
      summary.failures.push({ row_number: row.row_number, row_key: match?.row_key ?? null, error: match ? (match.error ?? match.status) : 'missing from the campaign' });
    }
    yield [...values, ...resultCells(match)];
  }
}

/**
 * Writes the results CSV in the input's own dialect (delimiter, line ends, BOM; UTF-16 input gets
 * UTF-8 with a BOM), through a temporary file renamed at the end: an interrupted run never
 * leaves half a results file.
 */
export async function writeResults(csv: CsvFile, out: string, serverRows: AsyncIterable<CampaignRowResult>): Promise<ResultsSummary> {
  const summary: ResultsSummary = { rows: 0, completed: 0, failed: 0, deleted: 0, other: 0, failures: [] };
  const tmp = path.join(path.dirname(out), `.${path.basename(out)}.${process.pid}.tmp`);
  try {
    await pipeline(
      Readable.from(mergeResults(csv.header, csv.rows(), serverRows, summary)),
      stringify({
        delimiter: csv.format.delimiter,
        record_delimiter: csv.format.eol,
        bom: csv.format.bom,
        // Excel writes a bare LF inside a cell of a CRLF file: any line break is quoted, whatever the row ending.
        quoted_match: /[\r\n]/,
      }),
      fs.createWriteStream(tmp),
    );
    await fs.promises.rename(tmp, out);
  } catch (e) {
    await fs.promises.rm(tmp, { force: true });
    throw e;
  }
  return summary;
}
