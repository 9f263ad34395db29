import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnLetter, csvParseOptions, headerProblem, sniffDelimiter, sniffText, toDataRow, type DataRow } from '../../src/domain/campaign-csv.ts';
import { openCsv } from '../../src/cli/campaign/csv-read.ts';
import { CliError } from '../../src/cli/campaign/errors.ts';
import type { CampaignRowResult } from '../../src/cli/campaign/server-calls.ts';
import { mergeResults, resultColumnNames, writeResults, type ResultsSummary } from '../../src/cli/campaign/results.ts';

const FIXTURES = new URL('../fixtures/campaigns/', import.meta.url);
const fixture = (name: string) => new URL(name, FIXTURES).pathname;

const AVATAR = '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a01';
const VOICE = '3d2b7c10-6a4e-4f1b-8c55-a9e0d4c10001';
const HEADER = ['type', 'row_key', 'avatar_id', 'avatar_type', 'script', 'voice_id', 'prompt', 'model', 'aspect_ratio', 'duration', 'text', 'voice_settings.stability'];
const SCRIPT = 'Hi there, meet "Trailrunner".\nLight, grippy; ready.';

/** The cells every fixture holds (the same four rows, saved by different programs). */
const expectedCells = (script = SCRIPT) => [
  { type: 'text-to-image', row_key: 'hero', prompt: 'a red sneaker, on wet asphalt', model: 'fast', aspect_ratio: '1:1' },
  { type: 'talking-avatar', row_key: 'intro', avatar_id: AVATAR, avatar_type: 'platform', script, voice_id: VOICE },
  { type: 'text-to-speech', row_key: 'vo', voice_id: VOICE, text: 'Big sale, today only.', 'voice_settings.stability': '0.5' },
  { type: 'ai-video', row_key: 'clip', prompt: 'a lighthouse at dusk', model: 'seedance-2.0-fast', aspect_ratio: '9:16', duration: '4' },
];

async function rowsOf(file: string): Promise<DataRow[]> {
  const csv = await openCsv(file);
  const out: DataRow[] = [];
  for await (const r of csv.rows()) out.push(r);
  return out;
}

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-csv-unit-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});
const write = async (name: string, content: string | Buffer) => {
  const p = path.join(dir, name);
  await fs.writeFile(p, content);
  return p;
};

describe('reading files as spreadsheets save them', () => {
  const cases: [file: string, format: Record<string, unknown>, script: string][] = [
    ['utf8-bom.csv', { encoding: 'utf-8', bom: true, delimiter: ',', eol: 'unix' }, SCRIPT],
    ['crlf.csv', { encoding: 'utf-8', bom: false, delimiter: ',', eol: 'windows' }, SCRIPT.replace('\n', '\r\n')],
    ['excel-semicolon.csv', { encoding: 'utf-8', bom: true, delimiter: ';', eol: 'windows' }, SCRIPT],
    ['google-sheets.csv', { encoding: 'utf-8', bom: false, delimiter: ',', eol: 'windows' }, SCRIPT],
    ['libreoffice.csv', { encoding: 'utf-8', bom: false, delimiter: ',', eol: 'unix' }, SCRIPT],
    ['excel-unicode-text.txt', { encoding: 'utf-16le', bom: true, delimiter: '\t', eol: 'windows' }, SCRIPT],
  ];
  for (const [file, format, script] of cases) {
    it(`${file}: format detected, four rows numbered 2-5, cells as typed`, async () => {
      const csv = await openCsv(fixture(file));
      expect(csv.format).toMatchObject({ ...format, sepLine: false });
      expect(csv.header).toEqual(HEADER);
      const rows = await rowsOf(fixture(file));
      // The talking-avatar script spans two lines of the file yet is one spreadsheet row.
      expect(rows.map((r) => r.row_number)).toEqual([2, 3, 4, 5]);
      expect(rows.map((r) => r.cells)).toEqual(expectedCells(script));
      expect(rows.every((r) => !r.blank && r.problems.length === 0)).toBe(true);
    });
  }

  it('European Excel: a decimal comma in a number column is sent as a point, the text keeps its commas, the record stays as read', async () => {
    const rows = await rowsOf(fixture('excel-semicolon.csv'));
    expect(rows[2]!.values.at(-1)).toBe('0,5');
    expect(rows[2]!.cells['voice_settings.stability']).toBe('0.5');
    expect(rows[2]!.cells.text).toBe('Big sale, today only.');
  });

  it("Excel's sep=; line sets the delimiter and is not a row", async () => {
    const file = await write('sep.csv', 'sep=;\r\ntype;prompt;model;aspect_ratio\r\ntext-to-image;a, b;fast;1:1\r\n');
    const csv = await openCsv(file);
    expect(csv.format).toMatchObject({ delimiter: ';', sepLine: true, eol: 'windows' });
    expect(csv.header).toEqual(['type', 'prompt', 'model', 'aspect_ratio']);
    expect(await rowsOf(file)).toMatchObject([{ row_number: 2, cells: { type: 'text-to-image', prompt: 'a, b' } }]);
  });

  it('blank rows (empty lines, rows of delimiters) keep their numbers and are marked blank', async () => {
    const file = await write('blank.csv', 'type,prompt\n\ntext-to-image,one\n,\n  ,  \ntext-to-image,two\n');
    const rows = await rowsOf(file);
    expect(rows.map((r) => [r.row_number, r.blank])).toEqual([[2, true], [3, false], [4, true], [5, true], [6, false]]);
    expect(rows[4]!.cells).toEqual({ type: 'text-to-image', prompt: 'two' });
  });

  it('short rows, trailing empty cells and empty cells are fine; only non-empty cells are sent', async () => {
    const file = await write('ragged.csv', 'Type , Prompt,model,\ntext-to-image,x\ntext-to-image,y,fast,,,\n');
    const rows = await rowsOf(file);
    expect(rows.map((r) => r.cells)).toEqual([{ type: 'text-to-image', prompt: 'x' }, { type: 'text-to-image', prompt: 'y', model: 'fast' }]);
    expect(rows.every((r) => r.problems.length === 0)).toBe(true);
  });

  it('a cell outside the header, or under a column without a name, is a problem of that row', async () => {
    const file = await write('outside.csv', 'type,prompt,\ntext-to-image,x,,extra\ntext-to-image,y,unnamed\n');
    const rows = await rowsOf(file);
    expect(rows[0]!.problems).toEqual([{ field: 'column D', message: 'is past the last column of the header row' }]);
    expect(rows[1]!.problems).toEqual([{ field: 'column C', message: 'has a value but no name in the header row' }]);
  });

  it('a quote inside an unquoted field is kept as text, as spreadsheets do', async () => {
    const file = await write('quote.csv', 'type,prompt\ntext-to-image,a 5" screen\n');
    expect((await rowsOf(file))[0]!.cells.prompt).toBe('a 5" screen');
  });

  it('old Mac line ends (CR alone) are read too, and written back the same way', async () => {
    const file = await write('cr.csv', 'type,prompt\rtext-to-image,"a\rb"\rtext-to-image,y\r');
    const csv = await openCsv(file);
    expect(csv.format.eol).toBe('mac');
    expect((await rowsOf(file)).map((r) => [r.row_number, r.cells.prompt])).toEqual([[2, 'a\rb'], [3, 'y']]);
  });

  it('UTF-8 without a BOM keeps accents and emoji', async () => {
    const file = await write('accents.csv', 'type,prompt\ntext-to-image,Crème brûlée ☕ 😀\n');
    expect((await rowsOf(file))[0]!.cells.prompt).toBe('Crème brûlée ☕ 😀');
  });
});

describe('files that cannot be run (exit status 2, before any request)', () => {
  const refused = async (file: string, message: RegExp) => {
    const e = await (async () => {
      const csv = await openCsv(file);
      for await (const _ of csv.rows()) void _;
    })().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode).toBe(2);
    expect((e as CliError).message).toMatch(message);
  };

  it('a missing file', () => refused(path.join(os.tmpdir(), 'no-such-campaign.csv'), /no such file/));
  it('an empty file', async () => refused(await write('empty.csv', ''), /is empty/));
  it('a header without a type column', async () => refused(await write('notype.csv', 'kind,prompt\nx,y\n'), /no "type" column/));
  it('a column named twice (case and spaces do not matter)', async () =>
    refused(await write('twice.csv', 'type,Prompt,prompt \nx,y,z\n'), /names column "prompt" twice \(columns B and C\)/));
  it('a file that is not UTF-8 (Excel\'s plain "CSV" in Windows-1252)', async () =>
    refused(await write('latin1.csv', Buffer.from('type,prompt\ntext-to-image,cr\xe8me br\xfbl\xe9e\n', 'latin1')), /not UTF-8 text.*CSV UTF-8/));
  it('names the offset of the first byte that is not UTF-8, not the start of the chunk holding it', async () => {
    const early = Buffer.concat([Buffer.from('type,prompt\ntext-to-image,cr'), Buffer.from([0xe8]), Buffer.from('me\n')]);
    await refused(await write('latin1-early.csv', early), /invalid bytes at byte 28\)/);
    // Past the first read chunk (64 KiB), after a character cut by the chunk boundary.
    const filler = `text-to-image,${'é'.repeat(40_000)}\n`;
    const prefix = Buffer.from(`type,prompt\n${filler}text-to-image,ok `);
    const late = Buffer.concat([prefix, Buffer.from([0xff]), Buffer.from(' more\n')]);
    await refused(await write('latin1-late.csv', late), new RegExp(`invalid bytes at byte ${prefix.length}\\)`));
    const whole = Buffer.from('type,prompt\ntext-to-image,x\n');
    await refused(await write('cut-at-end.csv', Buffer.concat([whole, Buffer.from([0xe2, 0x82])])), new RegExp(`invalid bytes at byte ${whole.length}\\)`));
  });
  it('an unclosed quote', async () => refused(await write('unclosed.csv', 'type,prompt\ntext-to-image,"never closed\n'), /not valid CSV/));
});

describe('delimiter sniffing', () => {
  it.each([
    ['type,prompt,model', ','],
    ['type;prompt;model', ';'],
    ['type\tprompt\tmodel', '\t'],
    ['"a,b";c;d', ';'],
    ['type', ','],
    ['type;prompt,model;x', ';'],
  ])('%j -> %j', (line, delimiter) => {
    expect(sniffDelimiter(line)).toBe(delimiter);
  });

  it('reads only the first record, quotes respected', () => {
    expect(sniffText('type;"a\nb,c,d"\r\nx,y,z,w')).toEqual({ delimiter: ';', eol: 'windows', sepLine: false });
  });

  it('column letters', () => {
    expect([0, 25, 26, 27, 701, 702].map(columnLetter)).toEqual(['A', 'Z', 'AA', 'AB', 'ZZ', 'AAA']);
  });

  it('toDataRow converts decimal commas only in number columns', () => {
    const row = toDataRow(['type', 'prompt', 'duration', 'voice_settings.stability'], ['ai-video', '1,5', '4,0', '0,25'], 2, true);
    expect(row.cells).toEqual({ type: 'ai-video', prompt: '1,5', duration: '4.0', 'voice_settings.stability': '0.25' });
  });
});

describe('the reading the dashboard shares (whole text in memory, no file)', () => {
  it('parses a European export with its sep= line as the CLI does: the header is row 1, its cells by column name', () => {
    const text = 'sep=;\r\nType;Prompt;Duration\r\nai-video;"a mug; steaming";4,5\r\n';
    const format = sniffText(text);
    expect(format).toEqual({ delimiter: ';', eol: 'windows', sepLine: true });
    const [header, ...data] = parse(text, csvParseOptions(format)) as string[][];
    expect(header).toEqual(['Type', 'Prompt', 'Duration']);
    expect(headerProblem(header!)).toBeUndefined();
    expect(toDataRow(['type', 'prompt', 'duration'], data[0]!, 2, true).cells).toEqual({ type: 'ai-video', prompt: 'a mug; steaming', duration: '4.5' });
  });

  it('names what is wrong with a header, without a file name (the caller adds one)', () => {
    expect(headerProblem(['kind', 'prompt'])).toBe('the header (row 1) has no "type" column (found: "kind", "prompt")');
    expect(headerProblem([])).toBe('the header (row 1) has no "type" column (found: nothing)');
    expect(headerProblem(['type', 'Prompt', ' prompt'])).toBe('the header names column "prompt" twice (columns B and C)');
    expect(headerProblem(['Type', '', 'prompt', ''])).toBeUndefined();
  });
});

describe('the results file', () => {
  const server = (rows: Partial<CampaignRowResult>[]): AsyncIterable<CampaignRowResult> =>
    (async function* () {
      for (const r of rows) {
        yield { row_key: null, type: 'text-to-image', status: 'completed', credits: 1, generation_id: null, voiceover_id: null, result_url: null, error: null, row_number: 0, ...r };
      }
    })();

  it('result columns that the input already has get a result_ prefix', () => {
    expect(resultColumnNames(['type', 'prompt'])).toEqual(['generation_id', 'status', 'credits', 'result_url', 'error']);
    expect(resultColumnNames(['type', 'Generation_ID', 'template_id'])).toEqual(['result_generation_id', 'status', 'credits', 'result_url', 'error']);
    expect(resultColumnNames(['type', 'status', 'result_status'])).toEqual(['generation_id', 'result_status_2', 'credits', 'result_url', 'error']);
  });

  it('merges by row number: blank rows stay blank, a voiceover id fills generation_id, a missing row says so', async () => {
    const file = await write('merge.csv', 'type,text,voice_id\ntext-to-speech,hi,v\n,,\ntext-to-speech,ho,v\ntext-to-speech,hu,v\n');
    const csv = await openCsv(file);
    const summary: ResultsSummary = { rows: 0, completed: 0, failed: 0, deleted: 0, other: 0, failures: [] };
    const out: string[][] = [];
    const merged = mergeResults(
      csv.header,
      csv.rows(),
      server([
        { row_number: 2, type: 'text-to-speech', voiceover_id: 'vo-1', result_url: 'https://x/a.mp3' },
        { row_number: 3, status: 'failed', error: 'never here' }, // not in the file (it is blank there): skipped
        { row_number: 5, status: 'failed', credits: 0, error: 'boom', row_key: 'k' },
      ]),
      summary,
    );
    for await (const r of merged) out.push(r);
    expect(out).toEqual([
      ['type', 'text', 'voice_id', 'generation_id', 'status', 'credits', 'result_url', 'error'],
      ['text-to-speech', 'hi', 'v', 'vo-1', 'completed', '1', 'https://x/a.mp3', ''],
      ['', '', '', '', '', '', '', ''],
      ['text-to-speech', 'ho', 'v', '', 'missing', '', '', 'the campaign has no such row (was the file changed?)'],
      ['text-to-speech', 'hu', 'v', '', 'failed', '0', '', 'boom'],
    ]);
    expect(summary).toMatchObject({ rows: 3, completed: 1, failed: 1, other: 1 });
    expect(summary.failures).toEqual([
      { row_number: 4, row_key: null, error: 'missing from the campaign' },
      { row_number: 5, row_key: 'k', error: 'boom' },
    ]);
  });

  it('a row whose generation was deleted names it and says so; it is counted as deleted, neither unfinished nor failed', async () => {
    const file = await write('deleted.csv', 'type,prompt\ntext-to-image,a\ntext-to-image,b\n');
    const csv = await openCsv(file);
    const summary: ResultsSummary = { rows: 0, completed: 0, failed: 0, deleted: 0, other: 0, failures: [] };
    const out: string[][] = [];
    const gone = '7e0c1f3a-2b4d-4c6e-8f10-1a2b3c4d5e6f';
    const merged = mergeResults(
      csv.header,
      csv.rows(),
      server([
        { row_number: 2, generation_id: gone, status: 'deleted', credits: 2, error: 'the generation was deleted (it had completed)' },
        { row_number: 3, generation_id: 'g-2', result_url: 'https://x/b.png' },
      ]),
      summary,
    );
    for await (const r of merged) out.push(r);
    expect(out.slice(1)).toEqual([
      ['text-to-image', 'a', gone, 'deleted', '2', '', 'the generation was deleted (it had completed)'],
      ['text-to-image', 'b', 'g-2', 'completed', '1', 'https://x/b.png', ''],
    ]);
    expect(summary).toMatchObject({ rows: 2, completed: 1, failed: 0, deleted: 1, other: 0, failures: [] });
  });

  it("is written in the input's dialect (European Excel: BOM, ;, CRLF) and round-trips through csv-parse", async () => {
    const csv = await openCsv(fixture('excel-semicolon.csv'));
    const out = path.join(dir, 'excel.results.csv');
    const summary = await writeResults(
      csv,
      out,
      server([2, 3, 4, 5].map((n) => ({ row_number: n, generation_id: `g${n}`, result_url: `https://h/r${n}?a=1;b=2`, error: n === 5 ? 'line one\nline two; "quoted"' : null }))),
    );
    expect(summary).toMatchObject({ rows: 4, completed: 4 });
    const bytes = await fs.readFile(out);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8');
    expect(text.split('\r\n')[0]).toBe('\ufefftype;row_key;avatar_id;avatar_type;script;voice_id;prompt;model;aspect_ratio;duration;text;voice_settings.stability;generation_id;status;credits;result_url;error');
    const input = parse(await fs.readFile(fixture('excel-semicolon.csv')), { bom: true, delimiter: ';', relax_column_count: true }) as string[][];
    const written = parse(bytes, { bom: true, delimiter: ';' }) as string[][];
    expect(written).toHaveLength(input.length);
    written.forEach((r, i) => expect(r.slice(0, HEADER.length)).toEqual(input[i]));
    expect(written[2]![4]).toBe(SCRIPT);
    expect(written[1]!.slice(HEADER.length)).toEqual(['g2', 'completed', '1', 'https://h/r2?a=1;b=2', '']);
    expect(written[4]!.at(-1)).toBe('line one\nline two; "quoted"');
    // No temporary file is left behind.
    expect((await fs.readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('quotes a cell holding a bare LF in a CRLF file (as European Excel writes it), so strict readers keep the row whole', async () => {
    const file = await write('excel-lf-in-cell.csv', '\ufefftype;script;voice_id\r\ntext-to-speech;line one\nline two;v\r\ntext-to-speech;cr\ronly;v\r\n');
    const csv = await openCsv(file);
    const out = path.join(dir, 'excel-lf-in-cell.results.csv');
    await writeResults(csv, out, server([2, 3].map((n) => ({ row_number: n, error: n === 3 ? 'a\nb' : null }))));
    const text = (await fs.readFile(out)).toString('utf8');
    expect(text).toContain('"line one\nline two"');
    expect(text).toContain('"cr\ronly"');
    // Strict, as Excel and Python's csv read: any line end ends an unquoted record, and every record has the header's width.
    const strict = parse(text, { bom: true, delimiter: ';', record_delimiter: ['\r\n', '\n', '\r'], relax_column_count: false }) as string[][];
    expect(strict).toHaveLength(3);
    expect(strict[1]!.slice(0, 3)).toEqual(['text-to-speech', 'line one\nline two', 'v']);
    expect(strict[2]!.slice(0, 3)).toEqual(['text-to-speech', 'cr\ronly', 'v']);
    expect(strict[2]!.at(-1)).toBe('a\nb');
  });

  it('UTF-16 input gives UTF-8 results with a BOM, tab-separated', async () => {
    const csv = await openCsv(fixture('excel-unicode-text.txt'));
    const out = path.join(dir, 'unicode.results.txt');
    await writeResults(csv, out, server([2, 3, 4, 5].map((n) => ({ row_number: n }))));
    const written = parse(await fs.readFile(out), { bom: true, delimiter: '\t' }) as string[][];
    expect(written).toHaveLength(5);
    expect(written[2]![4]).toBe(SCRIPT);
  });
});
