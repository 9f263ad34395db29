import fs from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';
import { columnName } from '../../domain/campaign-rows.ts';
import { csvParseOptions, detectEncoding, headerProblem, sniffText, toDataRow, type CsvFormat, type DataRow } from '../../domain/campaign-csv.ts';
import { CliError, EXIT_USAGE } from './errors.ts';

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

const SNIFF_BYTES = 64 * 1024;

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
  const parser = parse(csvParseOptions(format));
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

/** Checks a header row (a `type` column, and no column named twice) and gives its column names. */
export function checkHeader(file: string, header: string[]): string[] {
  const problem = headerProblem(header);
  if (problem) throw new CliError(EXIT_USAGE, `${file}: ${problem}`);
  return header.map(columnName);
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
