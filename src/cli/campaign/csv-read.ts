import fs from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';
import { CliError, EXIT_USAGE } from './errors.ts';

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

export interface CsvFile {
  path: string;
  format: CsvFormat;
  /** The header row's fields as written. */
  header: string[];
  /** The header's column names as the server reads them (trimmed, lower case); '' for a column without a name. */
  columns: string[];
  /** A fresh streaming pass over the data rows: memory stays flat whatever the file's size. */
  rows: () => AsyncGenerator<DataRow>;
}

// Spreadsheet headers: case and surrounding spaces do not matter (the server reads them the same way).
export { columnName } from '../../domain/campaign-rows.ts';
import { columnName } from '../../domain/campaign-rows.ts';

const SNIFF_BYTES = 64 * 1024;
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

export async function sniffFile(file: string): Promise<CsvFormat> {
  let head: Buffer;
  try {
    const fh = await fs.promises.open(file, 'r');
    try {
      const buf = Buffer.alloc(SNIFF_BYTES);
      const { bytesRead } = await fh.read(buf, 0, SNIFF_BYTES, 0);
      head = buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  } catch (e) {
    throw new CliError(EXIT_USAGE, `cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  const { encoding, bom } = detectEncoding(head);
  // Non-fatal and streaming: the sample may end inside a character.
  const text = new TextDecoder(encoding).decode(head, { stream: true });
  return { encoding, bom, ...sniffText(text) };
}

/** Bytes to text; a file that is not valid in its encoding stops the run with a hint rather than turning into U+FFFD. */
class Decode extends Transform {
  private readonly decoder: TextDecoder;
  private readonly encoding: CsvFormat['encoding'];
  private bytes = 0;
  // The end of the text decoded so far: a character cut by the chunk boundary starts in it.
  private tail = Buffer.alloc(0);
  private readonly file: string;
  constructor(encoding: CsvFormat['encoding'], file: string) {
    super({ decodeStrings: true, readableObjectMode: false, encoding: 'utf8' });
    this.decoder = new TextDecoder(encoding, { fatal: true });
    this.encoding = encoding;
    this.file = file;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    try {
      const text = this.decoder.decode(chunk, { stream: true });
      this.bytes += chunk.length;
      // Only the last bytes can start a character the next chunk completes; copying the whole chunk would be wasted.
      this.tail = Buffer.concat([this.tail, chunk.subarray(-4)]).subarray(-4);
      cb(null, text);
    } catch {
      cb(notText(this.file, this.firstBadByte(chunk)));
    }
  }
  override _flush(cb: TransformCallback): void {
    try {
      cb(null, this.decoder.decode());
    } catch {
      cb(notText(this.file, this.firstBadByte(Buffer.alloc(0))));
    }
  }

  /**
   * The file offset where the first undecodable character starts: decoding starts again, one byte
   * at a time, at the last character boundary before the chunk (the text before it was valid).
   */
  private firstBadByte(chunk: Buffer): number {
    const bytes = Buffer.concat([this.tail, chunk]);
    const base = this.bytes - this.tail.length;
    let start = 0;
    // UTF-8 continuation bytes are 10xxxxxx; UTF-16 characters start at even offsets.
    if (this.encoding === 'utf-8') while (start < this.tail.length && (bytes[start]! & 0xc0) === 0x80) start++;
    else if ((base + start) % 2 === 1) start++;
    const decoder = new TextDecoder(this.encoding, { fatal: true, ignoreBOM: true });
    let charStart = start;
    for (let i = start; i < bytes.length; i++) {
      try {
        if (decoder.decode(bytes.subarray(i, i + 1), { stream: true }).length > 0) charStart = i + 1;
      } catch {
        break;
      }
    }
    return base + charStart;
  }
}

const notText = (file: string, at: number) =>
  new CliError(
    EXIT_USAGE,
    `${file} is not UTF-8 text (invalid bytes at byte ${at}): save it as "CSV UTF-8" (Excel), ` +
      `or choose the Unicode (UTF-8) character set (LibreOffice)`,
  );

/** Every record of the file (the header first), as arrays of fields, streamed. */
export async function* readRecords(file: string, format: CsvFormat): AsyncGenerator<string[]> {
  const source = fs.createReadStream(file);
  const decode = new Decode(format.encoding, file);
  const parser = parse({
    delimiter: format.delimiter,
    // Rows may be shorter or longer than the header (spreadsheets drop trailing empty cells).
    relax_column_count: true,
    // A quote inside an unquoted field (`5" screen`) is kept as text, as spreadsheets do.
    relax_quotes: true,
    skip_empty_lines: false,
    from_line: format.sepLine ? 2 : 1,
  });
  source.on('error', (e) => decode.destroy(e));
  decode.on('error', (e) => parser.destroy(e));
  source.pipe(decode).pipe(parser);
  try {
    for await (const record of parser as AsyncIterable<string[]>) yield record;
  } catch (e) {
    if (e instanceof CliError) throw e;
    const err = e as CsvError;
    if (err.code?.startsWith?.('CSV_')) throw new CliError(EXIT_USAGE, `${file} is not valid CSV: ${err.message}`);
    throw new CliError(EXIT_USAGE, `cannot read ${file}: ${err.message}`);
  } finally {
    source.destroy();
    parser.destroy();
  }
}

/** Checks a header row: a `type` column, and no column named twice. */
export function checkHeader(file: string, header: string[]): string[] {
  const columns = header.map(columnName);
  if (!columns.includes('type')) {
    throw new CliError(
      EXIT_USAGE,
      `${file}: the header (row 1) has no "type" column (found: ${header.map((h) => JSON.stringify(h)).join(', ') || 'nothing'})`,
    );
  }
  const seen = new Map<string, number>();
  columns.forEach((c, i) => {
    if (!c) return;
    const first = seen.get(c);
    if (first !== undefined) throw new CliError(EXIT_USAGE, `${file}: the header names column "${c}" twice (columns ${columnLetter(first)} and ${columnLetter(i)})`);
    seen.set(c, i);
  });
  return columns;
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

/** Opens a campaign CSV: its format, its header (checked), and a way to stream its rows as often as needed. */
export async function openCsv(file: string): Promise<CsvFile> {
  const format = await sniffFile(file);
  let header: string[] | undefined;
  for await (const record of readRecords(file, format)) {
    header = record;
    break;
  }
  if (!header || header.every((h) => h.trim() === '')) throw new CliError(EXIT_USAGE, `${file} is empty: the first row must name the columns`);
  const columns = checkHeader(file, header);
  return {
    path: file,
    format,
    header,
    columns,
    rows: async function* () {
      let n = 0;
      for await (const record of readRecords(file, format)) {
        n++;
        if (n === 1) continue;
        yield toDataRow(columns, record, n, format.delimiter === ';');
      }
    },
  };
}
