import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTls } from '../../src/http/tls.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { runCli, type CliResult } from '../support/cli-run.ts';
import { pngBytes } from '../support/image-host.ts';

// `adforge campaign run` with local file paths in URL columns: the server is never given a path
// (it could not read the client's disk); each distinct file is uploaded once and the rows name
// the uploads.

let svc: TestService;
let dir: string;
let caFile: string;
let team: Awaited<ReturnType<TestService['team']>>;
let red: Buffer;
let blue: Buffer;

beforeAll(async () => {
  svc = await startTestService({}, { worker: true });
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-campaign-uploads-'));
  caFile = path.join(dir, 'server-ca.pem');
  await fs.writeFile(caFile, (await loadTls(svc.app.config)).cert);
  team = await svc.team({ credits: 1000 });
  [red, blue] = await Promise.all([pngBytes(80, 80, '#dd2222'), pngBytes(80, 80, '#2222dd')]);
  await fs.mkdir(path.join(dir, 'shoes'));
  await fs.writeFile(path.join(dir, 'shoes', 'red.png'), red);
  await fs.writeFile(path.join(dir, 'shoes', 'red-copy.png'), red);
  await fs.writeFile(path.join(dir, 'shoes', 'blue.png'), blue);
});
afterAll(async () => {
  await svc?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const show = (r: CliResult) => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
const campaign = (args: string[]) =>
  runCli(['campaign', 'run', ...args, '--ca', caFile], { ADFORGE_API_URL: svc.baseUrl, ADFORGE_API_KEY: team.key }, { timeoutMs: 80_000 });

describe('a campaign with local file paths', () => {
  const header = ['type', 'row_key', 'model', 'prompt', 'aspect_ratio', 'resolution', 'quantity', 'reference_image_urls'];
  const rows = [
    ['image-edit', 'red', 'fast', 'the shoe on a beach', '1:1', '1k', '1', './shoes/red.png'],
    ['image-edit', 'both', 'fast', 'the two shoes side by side', '1:1', '1k', '1', 'shoes/red-copy.png|./shoes/blue.png'],
  ];
  let file: string;
  let run: CliResult;
  beforeAll(async () => {
    file = path.join(dir, 'shoes.csv');
    await fs.writeFile(file, [header, ...rows].map((r) => r.join(',')).join('\n') + '\n');
    run = await campaign([file]);
  }, 90_000);

  it('says how many files it uploads and their size before the price, uploads each content once, and finishes', async () => {
    expect(run.code, show(run)).toBe(0);
    const kb = Math.max(1, Math.round((red.length + blue.length) / 1024));
    const announced = run.stdout.indexOf(`local files: 2 files to upload (${kb} KB), once each by content`);
    expect(announced, show(run)).toBeGreaterThanOrEqual(0);
    expect(announced).toBeLessThan(run.stdout.search(/^total: \d+ credits/m));
    expect(run.stdout).toMatch(/^finished: 2 completed, 0 failed; \d+ credits spent$/m);
    const uploads = await svc.app.db.selectFrom('uploads').selectAll().where('team_id', '=', team.teamId).execute();
    expect(uploads.map((u) => Number(u.size)).sort()).toEqual([red.length, blue.length].sort());
  });

  it('the server got upload references, never a path; the results file keeps the paths as typed', async () => {
    const generations = await svc.app.db.selectFrom('generations').select('params').where('team_id', '=', team.teamId).execute();
    expect(generations).toHaveLength(2);
    for (const g of generations) {
      const refs = (g.params as { reference_image_urls: string[] }).reference_image_urls;
      for (const ref of refs) expect(ref).toMatch(/^upload:[0-9a-f-]{36}$/);
      expect(JSON.stringify(g.params)).not.toContain('shoes/');
    }
    const written = parse(await fs.readFile(file.replace(/\.csv$/, '.results.csv')), { columns: true }) as Record<string, string>[];
    expect(written.map((r) => r.reference_image_urls)).toEqual(rows.map((r) => r[7]));
    expect(written.map((r) => r.status)).toEqual(['completed', 'completed']);
  });

  it('a missing local file stops the run before anything is uploaded or charged', async () => {
    const bad = path.join(dir, 'missing.csv');
    await fs.writeFile(bad, [header, ['image-edit', 'x', 'fast', 'p', '1:1', '1k', '1', './shoes/green.png']].map((r) => r.join(',')).join('\n') + '\n');
    const before = await svc.app.db.selectFrom('uploads').select('id').where('team_id', '=', team.teamId).execute();
    const r = await campaign([bad, '--dry-run']);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/row 2, reference_image_urls: cannot read the local file \.\/shoes\/green\.png/);
    expect(await svc.app.db.selectFrom('uploads').select('id').where('team_id', '=', team.teamId).execute()).toHaveLength(before.length);
  });
});
