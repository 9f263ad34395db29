// Reading a campaign spreadsheet, the same in the campaign CLI (src/cli/campaign/csv-read.ts, which
// streams a file from disk) and the dashboard's campaign page (which reads the chosen file in memory):
// the format a spreadsheet wrote, the parser's options, the header's check and each record's cells.
// Pure: the callers bring the bytes and csv-parse.
import { columnName } from './campaign-rows.ts';

/** How a CSV file is written: found once from its first bytes and header line, reused for every pass and for the results. */
export interface CsvFormat {
  encoding: 'utf-8' | 'utf-16le' | 'utf-16be';
  /** The file started with a byte order mark (Excel's "CSV UTF-8" does). */
  bom: boolean;
  delimiter: ',' | ';' | '\t';
  /** How the header line ended: CRLF (Excel, Google Sheets), LF (LibreOffice, most tools) or a lone CR (old Mac). */
  eol: 'windows' | 'unix' | 'mac';
  /** Excel's `sep=;` hint line came before the header (Excel hides it, so the header is still row 1). */
  sepLine: boolean;
}

export interface RowProblem {
  field: string;
  message: string;
}

/** One record after the header, numbered as a spreadsheet numbers it: the header is row 1. */
export interface DataRow {
  row_number: number;
  /** The record's fields as read (quoted newlines and commas kept). */
  values: string[];
  /** Every field empty or spaces only (spreadsheets export such rows): nothing to run, but it keeps its number. */
  blank: boolean;
  /** Column name (trimmed, lower case, as the server reads it) -> cell text, for non-blank cells only. */
  cells: Record<string, string>;
  /** What the client itself finds wrong with the record's shape (cells outside the header). */
  problems: RowProblem[];
}

const CANDIDATES = [',', ';', '\t'] as const;

/** The encoding from a byte order mark; without one the file must be UTF-8. */
export function detectEncoding(head: Uint8Array): { encoding: CsvFormat['encoding']; bom: boolean } {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', bom: true };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', bom: true };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', bom: true };
  return { encoding: 'utf-8', bom: false };
}

/** The first record of `text` (quotes respected) and how it ended. */
function firstRecord(text: string): { line: string; eol: CsvFormat['eol'] } {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '\n') return { line: text.slice(0, i), eol: 'unix' };
    else if (!quoted && c === '\r') return { line: text.slice(0, i), eol: text[i + 1] === '\n' ? 'windows' : 'mac' };
  }
  return { line: text, eol: 'unix' };
}

/**
 * The delimiter of a header line: whichever of comma, semicolon and tab occurs most often outside
 * quotes (European Excel writes `;`, "Unicode text" exports use tabs); a comma when there is none.
 */
export function sniffDelimiter(headerLine: string): CsvFormat['delimiter'] {
  const counts = new Map<string, number>(CANDIDATES.map((c) => [c, 0]));
  let quoted = false;
  for (const c of headerLine) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && counts.has(c)) counts.set(c, counts.get(c)! + 1);
  }
  let best: CsvFormat['delimiter'] = ',';
  for (const c of CANDIDATES) if (counts.get(c)! > counts.get(best)!) best = c;
  return best;
}

/** The format of a file's text start (BOM already removed). */
export function sniffText(text: string): Omit<CsvFormat, 'encoding' | 'bom'> {
  const first = firstRecord(text);
  const sep = /^sep=([,;\t])$/.exec(first.line);
  if (sep) {
    const header = firstRecord(text.slice(first.line.length).replace(/^\r?\n|^\r/, ''));
    return { delimiter: sep[1] as CsvFormat['delimiter'], eol: header.eol, sepLine: true };
  }
  return { delimiter: sniffDelimiter(first.line), eol: first.eol, sepLine: false };
}

/**
 * What is wrong with a header row, in words (the caller names the file): no `type` column, or a
 * column named twice. Undefined when it is fine.
 */
export function headerProblem(header: readonly string[]): string | undefined {
  const columns = header.map(columnName);
  if (!columns.includes('type')) return `the header (row 1) has no "type" column (found: ${header.map((h) => JSON.stringify(h)).join(', ') || 'nothing'})`;
  const seen = new Map<string, number>();
  for (const [i, c] of columns.entries()) {
    if (!c) continue;
    const first = seen.get(c);
    if (first !== undefined) return `the header names column "${c}" twice (columns ${columnLetter(first)} and ${columnLetter(i)})`;
    seen.set(c, i);
  }
  return undefined;
}

/**
 * How csv-parse reads a campaign file of this format, the same in the CLI's stream and the
 * dashboard's in-memory parse: records numbered as written, blank lines kept (a row keeps its
 * spreadsheet number), Excel's `sep=` line skipped.
 */
export function csvParseOptions(format: Pick<CsvFormat, 'delimiter' | 'sepLine'>) {
  return {
    delimiter: format.delimiter,
    // Rows may be shorter or longer than the header (spreadsheets drop trailing empty cells).
    relax_column_count: true,
    // A quote inside an unquoted field (`5" screen`) is kept as text, as spreadsheets do.
    relax_quotes: true,
    skip_empty_lines: false,
    from_line: format.sepLine ? 2 : 1,
  };
}

/** A spreadsheet column letter: 0 -> A, 26 -> AA. */
export function columnLetter(index: number): string {
  let s = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

/**
 * Number columns of the endpoints (and every `object.member` column, which holds numbers): where
 * a European spreadsheet writes `0,5`, the server reads only `0.5`.
 */
const NUMBER_COLUMNS = new Set(['duration', 'quantity', 'width', 'height', 'speaker_num']);
const DECIMAL_COMMA = /^(\s*[+-]?\d+),(\d+\s*)$/;
export const isNumberColumn = (name: string): boolean => NUMBER_COLUMNS.has(name) || name.includes('.');

/**
 * One data record to the cells the server checks, with what is wrong with its shape. With
 * `decimalComma` (files separated by `;`, as European Excel writes them) a number cell `0,5`
 * is sent as `0.5`; the record's own values are left as read.
 */
export function toDataRow(columns: readonly string[], values: string[], rowNumber: number, decimalComma = false): DataRow {
  const cells: Record<string, string> = {};
  const problems: RowProblem[] = [];
  let blank = true;
  values.forEach((v, i) => {
    if (v.trim() === '') return;
    blank = false;
    const name = columns[i];
    if (name) cells[name] = decimalComma && isNumberColumn(name) ? v.replace(DECIMAL_COMMA, '$1.$2') : v;
    else if (name === '') problems.push({ field: `column ${columnLetter(i)}`, message: 'has a value but no name in the header row' });
    else problems.push({ field: `column ${columnLetter(i)}`, message: 'is past the last column of the header row' });
  });
  return { row_number: rowNumber, values, blank, cells, problems };
}
