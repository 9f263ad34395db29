import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_AVATARS } from '../../src/domain/catalogue/platform-avatars.ts';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { loadTls } from '../../src/http/tls.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { ROOT, runCli, spawnCli, type CliResult } from '../support/cli-run.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { makeMedia } from '../support/media-probe.ts';

// `adforge campaign run` is a client of the API: every test spawns the real CLI against a service
// started here, over real TLS (the service's self-signed certificate passed with --ca), through
// --api-url or ADFORGE_API_URL / ADFORGE_API_KEY.

const AVATAR = PLATFORM_AVATARS[0]!.id;
const VOICE = VOICES[0]!.id;
const FIXTURES = path.join(ROOT, 'test/fixtures/campaigns');
const EXAMPLES = path.join(ROOT, 'examples');

let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
let dir: string;
let caFile: string;

beforeAll(async () => {
  // Slow generations, so a run can be killed while its rows are still processing.
  svc = await startTestService({ LOCAL_ENGINE_DELAY_MS: '1500' }, { worker: true });
  gql = await graphqlClient(svc);
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-campaign-cli-'));
  caFile = path.join(dir, 'server-ca.pem');
  await fs.writeFile(caFile, (await loadTls(svc.app.config)).cert);
  const [png, png2, clip] = await Promise.all([
    pngBytes(128, 128, '#884422'),
    pngBytes(96, 96, '#228844'),
    makeMedia(['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10', '-f', 'lavfi', '-i', 'sine=frequency=300:sample_rate=16000', '-t', '2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'], 'mp4'),
  ]);
  host = await startImageHost({ '/p.png': sendBytes(png, 'image/png'), '/p2.png': sendBytes(png2, 'image/png'), '/clip.mp4': sendBytes(clip, 'video/mp4') });
});
afterAll(async () => {
  await host?.close();
  await gql?.close();
  await svc?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

/** `adforge campaign run ARGS` with the service's URL and a key in the environment and its certificate passed with --ca. */
function campaign(args: string[], key: string, opts: { env?: Record<string, string | undefined>; ca?: boolean; timeoutMs?: number } = {}): Promise<CliResult> {
  return runCli(
    ['campaign', 'run', ...args, ...(opts.ca === false ? [] : ['--ca', caFile])],
    { ADFORGE_API_URL: svc.baseUrl, ADFORGE_API_KEY: key, ...opts.env },
    { timeoutMs: opts.timeoutMs ?? 30_000 },
  );
}
const show = (r: CliResult) => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

/** A CSV the way a careful program writes it: fields quoted only when needed. */
function toCsv(rows: string[][], sep = ',', eol = '\n'): string {
  const q = (v: string) => (/["\n\r]/.test(v) || v.includes(sep) ? `"${v.replace(/"/g, '""')}"` : v);
  return rows.map((r) => r.map(q).join(sep)).join(eol) + eol;
}
async function writeFile(name: string, content: string | Buffer): Promise<string> {
  const p = path.join(dir, name);
  await fs.writeFile(p, content);
  return p;
}

const creditsUsed = async (teamId: string) =>
  (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow()).credits_used;
const count = async (query: ReturnType<typeof sql<{ n: number }>>) => (await query.execute(svc.app.db)).rows[0]!.n;

/** The server's own price of rows read from a file by csv-parse (independently of the CLI's reader). */
async function serverPrice(key: string, file: string, delimiter = ','): Promise<number> {
  const records = parse(await fs.readFile(file), { bom: true, delimiter, relax_column_count: true }) as string[][];
  const [header, ...data] = records;
  const rows = data.map((r, i) => ({
    row_number: i + 2,
    cells: Object.fromEntries(header!.map((h, j) => [h, (r[j] ?? '').replace(/^(\d+),(\d+)$/, '$1.$2')]).filter(([, v]) => v !== '')),
  }));
  const res = await gql.gql(`query ($rows: [CampaignRowInput!]!) { checkCampaignRows(rows: $rows) { ok credits } }`, { rows }, key);
  const checked = res.body.data.checkCampaignRows as { ok: boolean; credits: number }[];
  expect(checked.every((c) => c.ok)).toBe(true);
  return checked.reduce((s, c) => s + c.credits, 0);
}
const totalOf = (r: CliResult) => Number(/^total: (\d+) credits/m.exec(r.stdout)?.[1] ?? NaN);

/** LibreOffice's own export: a CSV opened in Calc (as .ods) and saved again as CSV, or null without soffice. */
async function libreOfficeExport(source: string, name: string, importColumns: string | null): Promise<string | null> {
  const soffice = await promisify(execFile)('sh', ['-c', 'command -v soffice']).then(
    (r) => r.stdout.trim(),
    () => '',
  );
  if (!soffice) return null;
  const work = await fs.mkdtemp(path.join(dir, 'lo-'));
  const src = path.join(work, `${name}.csv`);
  await fs.writeFile(src, source);
  const run = (args: string[]) => promisify(execFile)(soffice, ['--headless', `-env:UserInstallation=file://${work}/profile`, ...args], { timeout: 60_000 });
  // Import: `;`-separated, UTF-8 (76), line 1 on; column types as given (2 = text), else Calc guesses.
  await run([`--infilter=CSV:59,34,76,1${importColumns ? `,${importColumns}` : ''}`, '--convert-to', 'ods', '--outdir', path.join(work, 'ods'), src]);
  // Export: comma, double quote, UTF-8, quote all text cells, as shown.
  await run(['--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,true,true,false,false', '--outdir', path.join(work, 'out'), path.join(work, 'ods', `${name}.ods`)]);
  return path.join(work, 'out', `${name}.csv`);
}

const QUIRK_HEADER = ['type', 'row_key', 'avatar_id', 'avatar_type', 'script', 'voice_id', 'prompt', 'model', 'aspect_ratio', 'duration', 'text', 'voice_settings.stability'];
const SCRIPT = 'Hi there, meet "Trailrunner".\nLight, grippy; ready.';
const QUIRK_ROWS = [
  ['text-to-image', 'hero', '', '', '', '', 'a red sneaker, on wet asphalt', 'fast', '1:1', '', '', ''],
  ['talking-avatar', 'intro', AVATAR, 'platform', SCRIPT, VOICE, '', '', '', '', '', ''],
  ['text-to-speech', 'vo', '', '', '', VOICE, '', '', '', '', 'Big sale, today only.', '0.5'],
  ['ai-video', 'clip', '', '', '', '', 'a lighthouse at dusk', 'seedance-2.0-fast', '9:16', '4', '', ''],
];

describe('files as spreadsheets save them: checked and priced (--dry-run)', () => {
  let key: string;
  let teamId: string;
  let price: number;
  beforeAll(async () => {
    ({ key, teamId } = await svc.team({ credits: 1000 }));
    price = await serverPrice(key, path.join(FIXTURES, 'utf8-bom.csv'));
    expect(price).toBe(30); // 1 + 20 + 1 + 8
  });

  const fixtures = ['utf8-bom.csv', 'crlf.csv', 'excel-semicolon.csv', 'google-sheets.csv', 'libreoffice.csv', 'excel-unicode-text.txt'];
  it.each(fixtures)('%s: 4 rows, all valid, the price of checkCampaignRows', async (name) => {
    const r = await campaign([path.join(FIXTURES, name), '--dry-run'], key);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toMatch(/^4 rows checked, all valid$/m);
    expect(r.stdout).toMatch(/^total: 30 credits; balance: 1000 credits remaining \(limit 1000, used 0\)$/m);
    expect(r.stdout).toMatch(/^dry run: nothing was submitted$/m);
    expect(totalOf(r)).toBe(price);
  });

  it('a file exported right now by LibreOffice (Calc, from .ods) is read the same', async () => {
    const exported = await libreOfficeExport(toCsv([QUIRK_HEADER, ...QUIRK_ROWS], ';', '\r\n'), 'calc-export', '1/2/2/2/3/2/4/2/5/2/6/2/7/2/8/2/9/2/10/1/11/2/12/1');
    const file = exported ?? path.join(FIXTURES, 'libreoffice.csv');
    const text = await fs.readFile(file, 'utf8');
    // Calc's own style: text quoted, numbers bare, empty cells empty, LF line ends.
    expect(text).toContain('"ai-video","clip",,,,,"a lighthouse at dusk","seedance-2.0-fast","9:16",4,,\n');
    const r = await campaign([file, '--dry-run'], key);
    expect(r.code, show(r)).toBe(0);
    expect(totalOf(r)).toBe(price);
  });

  it('a ratio that Calc turned into a time is refused with its row, its field and a hint', async () => {
    const exported = await libreOfficeExport(toCsv([QUIRK_HEADER, ...QUIRK_ROWS], ';', '\r\n'), 'calc-guessed', null);
    if (!exported) return; // no LibreOffice on this machine
    const r = await campaign([exported, '--dry-run'], key);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/^ {2}row 2 {2}aspect_ratio: .*spreadsheet turned the ratio into a time/m);
    expect(r.stderr).toMatch(/^ {2}row 5 {2}aspect_ratio: /m);
    expect(await creditsUsed(teamId)).toBe(0);
  });

  it('NODE_EXTRA_CA_CERTS works instead of --ca; with neither, the certificate is refused with a hint', async () => {
    const fixture = path.join(FIXTURES, 'google-sheets.csv');
    const extra = await campaign([fixture, '--dry-run'], key, { ca: false, env: { NODE_EXTRA_CA_CERTS: caFile } });
    expect(extra.code, show(extra)).toBe(0);
    const none = await campaign([fixture, '--dry-run'], key, { ca: false });
    expect(none.code, show(none)).toBe(1);
    expect(none.stderr).toMatch(/certificate .* not trusted.*--ca FILE/);
  });

  it('usage problems exit 2 before any request', async () => {
    const fixture = path.join(FIXTURES, 'crlf.csv');
    const noKey = await campaign([fixture], '', { env: { ADFORGE_API_KEY: undefined } });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/no API key: pass --api-key or set ADFORGE_API_KEY/);
    const noFile = await campaign([path.join(dir, 'nope.csv')], key);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toMatch(/no such file/);
    const badFlag = await campaign([fixture, '--colour', 'red'], key);
    expect(badFlag.code).toBe(2);
    const wrongKey = await campaign([fixture, '--dry-run'], 'service_sk_notavalidkey');
    expect(wrongKey.code, show(wrongKey)).toBe(1);
    expect(wrongKey.stderr).toMatch(/API key was refused/);
  });

  it('every example file is valid (product ids filled in) and priced', async () => {
    const product = await svc.api('POST', '/api/v1/products', { key, body: { name: 'Mug', description: 'd', category: 'c', image_url: host.url('/p.png') } });
    expect(product.status).toBe(201);
    const names = (await fs.readdir(EXAMPLES)).filter((f) => f.endsWith('.csv')).sort();
    expect(names).toHaveLength(9);
    const results = await Promise.all(
      names.map(async (name) => {
        let file = path.join(EXAMPLES, name);
        if (name === 'product-shots.csv') file = await writeFile(name, (await fs.readFile(file, 'utf8')).replaceAll('YOUR_PRODUCT_ID', product.body.id));
        return [name, await campaign([file, '--dry-run'], key)] as const;
      }),
    );
    for (const [name, r] of results) {
      expect(r.code, `${name}\n${show(r)}`).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^  ${name.replace('.csv', '')} +\\d rows +\\d+ credits$`, 'm'));
    }
  });
});

describe('a file with bad rows', () => {
  it('refuses the whole run, listing each bad row by number and field; nothing is stored or charged', async () => {
    const { key, teamId } = await svc.team({ credits: 1000 });
    const file = await writeFile(
      'bad.csv',
      toCsv([
        ['type', 'prompt', 'model', 'aspect_ratio', 'colour', 'avatar_id', 'avatar_type', 'script', 'voice_id'],
        ['text-to-image', 'fine', 'fast', '1:1', '', '', '', '', ''],
        ['text-to-image', 'bad model', 'nope', '1:1', '', '', '', '', ''],
        ['text-to-image', 'typo column', 'fast', '1:1', 'red', '', '', '', ''],
        ['', '', '', '', '', '', '', '', ''],
        ['talking-avatar', '', '', '', '', AVATAR, 'platform', 'Hello', '3d2b7c10-6a4e-4f1b-8c55-000000000000'],
        ['text-to-video', 'x', '', '', '', '', '', '', ''],
      ]),
    );
    const r = await campaign([file, '--yes', '--name', 'bad rows'], key);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/^ {2}row 3 {2}model: /m);
    expect(r.stderr).toMatch(/^ {2}row 4 {2}colour: is not a field of text-to-image$/m);
    expect(r.stderr).toMatch(/^ {2}row 6 {2}voice_id: /m);
    expect(r.stderr).toMatch(/^ {2}row 7 {2}type: must be one of /m);
    expect(r.stderr).not.toMatch(/row [25]\b/);
    expect(r.stderr).toMatch(/4 of 5 rows are invalid; nothing was submitted/);
    expect(r.stdout).not.toMatch(/total:/);
    expect(await count(sql`select count(*)::int as n from campaigns where team_id = ${teamId}`)).toBe(0);
    expect(await count(sql`select count(*)::int as n from generations where team_id = ${teamId}`)).toBe(0);
    expect(await creditsUsed(teamId)).toBe(0);
  });
});

describe('a mixed campaign of every type, end to end', () => {
  let key: string;
  let teamId: string;
  let file: string;
  let run: CliResult;
  let dryTotal: number;
  const header = [
    'type', 'row_key', 'prompt', 'model', 'aspect_ratio', 'duration', 'resolution', 'avatar_id', 'avatar_type', 'script', 'voice_id',
    'video_url', 'mode', 'width', 'height', 'output_language', 'template_id', 'product_id', 'style_id', 'reference_image_urls', 'text',
    'voice_settings.stability',
  ];
  const row = (cells: Record<string, string>) => header.map((h) => cells[h] ?? '');

  beforeAll(async () => {
    ({ key, teamId } = await svc.team({ credits: 1000 }));
    const product = await svc.api('POST', '/api/v1/products', { key, body: { name: 'Mug', description: 'd', category: 'c', image_url: host.url('/p.png') } });
    const clip = host.url('/clip.mp4');
    file = await writeFile(
      'mixed.csv',
      toCsv([
        header,
        row({ type: 'talking-avatar', row_key: 'ta', avatar_id: AVATAR, avatar_type: 'platform', script: 'Hello, "friends"!\nNew shoes, today.', voice_id: VOICE }),
        row({ type: 'ai-video', row_key: 'av', prompt: 'a lighthouse at dusk', model: 'seedance-2.0-fast', aspect_ratio: '9:16', duration: '4', resolution: '480p' }),
        row({ type: 'swap-avatar', row_key: 'sw', video_url: clip, mode: 'standard', duration: '2', width: '64', height: '64', avatar_id: AVATAR, avatar_type: 'platform' }),
        row({ type: 'localize', row_key: 'lo', video_url: clip, mode: 'speed', output_language: 'es', duration: '2', width: '64', height: '64' }),
        row({ type: 'video-edit', row_key: 've', template_id: 'bold-pop', video_url: clip }),
        row({ type: 'text-to-image', row_key: 'ti', prompt: 'a red sneaker, studio light', model: 'fast', aspect_ratio: '1:1' }),
        row({ type: 'product-shots', row_key: 'ps', product_id: product.body.id, style_id: 'studio-white', model: 'fast', aspect_ratio: '1:1' }),
        row({ type: 'image-edit', row_key: 'ie', prompt: 'combine both', reference_image_urls: `${host.url('/p.png')} | ${host.url('/p2.png')}`, model: 'fast', aspect_ratio: '4:5' }),
        row({ type: 'text-to-speech', row_key: 'tts', text: 'Big sale, today only.', voice_id: VOICE, 'voice_settings.stability': '0.4' }),
      ]),
    );
    const dry = await campaign([file, '--dry-run', '--api-url', `${svc.baseUrl}/graphql`, '--api-key', key], '', { env: { ADFORGE_API_URL: undefined } });
    expect(dry.code, show(dry)).toBe(0);
    dryTotal = totalOf(dry);
    run = await campaign([file, '--name', 'every type'], key, { timeoutMs: 80_000 });
  }, 90_000);

  it('exits 0 and reports every row completed', () => {
    expect(run.code, show(run)).toBe(0);
    expect(run.stdout).toMatch(/^9 rows checked, all valid$/m);
    expect(run.stdout).toMatch(/^progress: \d+\/9 done \| submitted \d+ \| processing \d+ \| completed \d+ \| failed 0 \| credits spent \d+$/m);
    expect(run.stdout).toMatch(/^finished: 9 completed, 0 failed; \d+ credits spent$/m);
    expect(run.stdout).toContain(`results: ${file.replace(/\.csv$/, '.results.csv')}`);
  });

  it('the dry-run price is the sum of the row prices charged, and what the team used', async () => {
    expect(dryTotal).toBe(await serverPrice(key, file));
    const results = parse(await fs.readFile(file.replace(/\.csv$/, '.results.csv')), { columns: true }) as Record<string, string>[];
    const charged = results.reduce((s, r) => s + Number(r.credits), 0);
    expect(charged).toBe(dryTotal);
    expect(await creditsUsed(teamId)).toBe(dryTotal);
  });

  it('the results file round-trips: every input row and column unchanged, then generation_id, status, credits, result_url, error', async () => {
    const input = parse(await fs.readFile(file)) as string[][];
    const written = parse(await fs.readFile(file.replace(/\.csv$/, '.results.csv'))) as string[][];
    expect(written).toHaveLength(input.length);
    expect(written[0]).toEqual([...header, 'generation_id', 'status', 'credits', 'result_url', 'error']);
    written.forEach((r, i) => expect(r.slice(0, header.length)).toEqual(input[i]));
    expect(written[1]![header.indexOf('script')]).toBe('Hello, "friends"!\nNew shoes, today.');
    for (const r of written.slice(1)) {
      const [id, status, , url, error] = r.slice(header.length);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(status).toBe('completed');
      expect(error).toBe('');
      expect((await svc.fetchUrl(url!)).status).toBe(200);
    }
    // A text-to-speech row's generation_id is its voiceover id.
    const tts = written.at(-1)!;
    const vo = await svc.app.db.selectFrom('voiceovers').select(['id', 'voice_settings']).where('team_id', '=', teamId).executeTakeFirstOrThrow();
    expect(tts[header.length]).toBe(vo.id);
    expect(vo.voice_settings).toMatchObject({ stability: 0.4 });
  });

  it("the generation got the cell's text as typed (quoted comma, quotes and line break)", async () => {
    const results = parse(await fs.readFile(file.replace(/\.csv$/, '.results.csv')), { columns: true }) as Record<string, string>[];
    const id = results[0]!.generation_id;
    const g = await svc.api('GET', `/api/v1/generations/${id}`, { key });
    expect(g.body.details.script).toBe('Hello, "friends"!\nNew shoes, today.');
  });
});

describe('a key with a tight rate limit', () => {
  it('the run waits out each 429 (Retry-After) and finishes every row, charged once', async () => {
    const { key, keyId, teamId } = await svc.team({ credits: 1000 });
    // 10 tokens and 1 a second: the run's calls cost about 18 (each mutation 5, each query 1), so it
    // meets the limit however slowly the machine sends them, and waits at most 5 s each time.
    await svc.app.services.teams.setRateLimit(keyId, { per_minute: 60, burst: 10 });
    const rows = [['type', 'row_key', 'prompt', 'model', 'aspect_ratio'], ...Array.from({ length: 6 }, (_, i) => ['text-to-image', `r-${i}`, `poster ${i}`, 'fast', '1:1'])];
    const file = await writeFile('limited.csv', toCsv(rows));
    const refusedBefore = svc.logLines.filter((l) => l.includes('"statusCode":429')).length;
    const r = await campaign([file, '--yes', '--name', 'limited', '--out', path.join(dir, 'limited-out.csv')], key, { timeoutMs: 60_000 });
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toMatch(/^finished: 6 completed, 0 failed; 6 credits spent$/m);
    expect(await creditsUsed(teamId)).toBe(6);
    // It did meet the limit on the way.
    expect(svc.logLines.filter((l) => l.includes('"statusCode":429')).length).toBeGreaterThan(refusedBefore);
  }, 90_000);
});

describe('a run killed halfway and started again with the same --name', () => {
  it('continues the same campaign: each row charged exactly once, results for every row', async () => {
    const { key, teamId } = await svc.team({ credits: 1000 });
    // European Excel: BOM, `;`, CRLF, decimal commas.
    const rows = [
      ['type', 'row_key', 'prompt', 'model', 'aspect_ratio', 'quantity', 'text', 'voice_id', 'voice_settings.stability'],
      ...Array.from({ length: 8 }, (_, i) => ['text-to-image', `img-${i}`, `poster ${i}; bold colours`, 'fast', '1:1', String((i % 2) + 1), '', '', '']),
      ['text-to-speech', 'vo', '', '', '', '', 'Sale ends Sunday.', VOICE, '0,7'],
    ];
    const file = await writeFile('resume.csv', `\ufeff${toCsv(rows, ';', '\r\n')}`);
    const out = path.join(dir, 'resume-out.csv');
    const env = { ADFORGE_API_URL: `${svc.baseUrl}/graphql`, ADFORGE_API_KEY: key };

    const first = spawnCli(['campaign', 'run', file, '--name', 'resume me', '--out', out, '--ca', caFile], env);
    await first.waitForStdout(/^progress: /m, 30_000);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const campaignRow = await svc.app.db.selectFrom('campaigns').select(['id', 'status']).where('team_id', '=', teamId).executeTakeFirstOrThrow();
    expect(campaignRow.status).not.toBe('draft');
    // Killed while generations were still processing (LOCAL_ENGINE_DELAY_MS=1500).
    expect(await count(sql`select count(*)::int as n from generations where team_id = ${teamId} and status = 'completed'`)).toBeLessThan(8);
    await expect(fs.access(out)).rejects.toThrow();

    const second = await campaign([file, '--name', 'resume me', '--out', out], key, { timeoutMs: 60_000 });
    expect(second.code, show(second)).toBe(0);
    expect(second.stdout).toMatch(/^continuing campaign "resume me"/m);
    expect(second.stdout).toMatch(/^finished: 9 completed, 0 failed; \d+ credits spent$/m);

    // One campaign; one generation per image row, one voiceover; one debit each; nothing charged twice.
    expect(await count(sql`select count(*)::int as n from campaigns where team_id = ${teamId}`)).toBe(1);
    expect(await count(sql`select count(*)::int as n from generations where team_id = ${teamId}`)).toBe(8);
    expect(await count(sql`select count(*)::int as n from voiceovers where team_id = ${teamId}`)).toBe(1);
    const debits = (
      await sql<{ subject_id: string; n: number; amount: number }>`select subject_id, count(*)::int as n, sum(amount)::int as amount
        from credit_ledger where team_id = ${teamId} and kind = 'debit' group by subject_id`.execute(svc.app.db)
    ).rows;
    expect(debits).toHaveLength(9);
    expect(debits.every((d) => d.n === 1)).toBe(true);
    const rowPrices = (await sql<{ credits: number }>`select credits from campaign_rows where campaign_id = ${campaignRow.id}`.execute(svc.app.db)).rows;
    const sumOfRows = rowPrices.reduce((s, r) => s + r.credits, 0);
    expect(sumOfRows).toBe(8 * 1 + 4 * 1 + 1); // quantities 1,2,1,2...: 12 credits of images, 1 voiceover
    expect(await creditsUsed(teamId)).toBe(sumOfRows);
    expect(debits.reduce((s, d) => s + d.amount, 0)).toBe(sumOfRows);

    const results = parse(await fs.readFile(out), { bom: true, delimiter: ';', columns: true }) as Record<string, string>[];
    expect(results).toHaveLength(9);
    expect(results.every((r) => r.status === 'completed')).toBe(true);
    expect(results.map((r) => r.row_key)).toEqual([...Array.from({ length: 8 }, (_, i) => `img-${i}`), 'vo']);
    expect(results[8]!['voice_settings.stability']).toBe('0,7'); // the input cell as it was

    // Once more: the campaign has finished, so straight to the results file; nothing new is made.
    const third = await campaign([file, '--name', 'resume me', '--out', out], key);
    expect(third.code, show(third)).toBe(0);
    expect(third.stdout).toMatch(/already finished: writing its results/);
    expect(await count(sql`select count(*)::int as n from generations where team_id = ${teamId}`)).toBe(8);
    expect(await creditsUsed(teamId)).toBe(sumOfRows);
  }, 80_000);
});

describe('not enough credits', () => {
  it('the server refuses the start before anything is submitted: exit 1, nothing charged', async () => {
    const { key, teamId } = await svc.team({ credits: 10 });
    const file = await writeFile(
      'expensive.csv',
      toCsv([
        ['type', 'avatar_id', 'avatar_type', 'script', 'voice_id'],
        ['talking-avatar', AVATAR, 'platform', 'Hello there.', VOICE],
        ['talking-avatar', AVATAR, 'platform', 'Hello again.', VOICE],
      ]),
    );
    const r = await campaign([file], key);
    expect(r.code, show(r)).toBe(1);
    expect(r.stdout).toMatch(/^total: 40 credits; balance: 10 credits remaining/m);
    expect(r.stderr).toMatch(/balance does not cover the whole file/);
    expect(r.stderr).toMatch(/need 40 credits and 10 are available; nothing was started/);
    expect(r.stdout).not.toMatch(/progress:/);
    expect(await count(sql`select count(*)::int as n from generations where team_id = ${teamId}`)).toBe(0);
    expect(await count(sql`select count(*)::int as n from credit_ledger where team_id = ${teamId} and kind = 'debit'`)).toBe(0);
    expect(await creditsUsed(teamId)).toBe(0);
  });
});

describe('a row that fails', () => {
  it('does not stop the others: they complete, it is refunded, the results say why, exit 1', async () => {
    const { key, teamId } = await svc.team({ credits: 100 });
    const file = await writeFile(
      'one-fails.csv',
      toCsv([
        ['type', 'row_key', 'prompt', 'model', 'aspect_ratio'],
        ['text-to-image', 'a', 'a blue mug', 'fast', '1:1'],
        ['text-to-image', 'b', 'this one breaks [[fail]]', 'fast', '1:1'],
        ['text-to-image', 'c', 'a green mug', 'fast', '1:1'],
      ]),
    );
    const r = await campaign([file, '--name', 'one fails'], key, { timeoutMs: 60_000 });
    expect(r.code, show(r)).toBe(1);
    expect(r.stdout).toMatch(/^finished: 2 completed, 1 failed; 2 credits spent$/m);
    const results = parse(await fs.readFile(file.replace(/\.csv$/, '.results.csv')), { columns: true }) as Record<string, string>[];
    expect(results.map((x) => [x.row_key, x.status, x.credits])).toEqual([['a', 'completed', '1'], ['b', 'failed', '0'], ['c', 'completed', '1']]);
    expect(results[1]!.error).not.toBe('');
    expect(results[1]!.result_url).toBe('');
    expect(await creditsUsed(teamId)).toBe(2);
  }, 70_000);
});
