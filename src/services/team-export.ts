import path from 'node:path';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { AppError } from '../domain/errors.ts';
import type { GenerationRow } from '../db/types.ts';
import { findTeamRecord, ledgerLinesAfter, teamGenerationsAfter, teamQueries, teamRows, teamUploads, type TeamRecord } from '../repositories/team-data.ts';
import { operatorActor, recordAudit, type AuditActor } from './audit.ts';
import type { Deps } from './deps.ts';
import { requireUuid } from './ids.ts';
import { openArchive, type ArchiveWriter } from './team-export-archive.ts';

/** Bumped when the archive's layout changes in a way a reader must know. */
export const EXPORT_FORMAT_VERSION = 1;
const GENERATIONS_PER_READ = 200;
const LEDGER_LINES_PER_READ = 2000;

export const LEDGER_CSV_COLUMNS = ['id', 'created_at', 'kind', 'amount', 'generation_id', 'subject_type', 'subject_id', 'note', 'credits_used_after'] as const;

export interface ExportSummary {
  team_id: string;
  generations: number;
  files: number;
  /** Stored files the rows name that storage no longer holds (listed in team.json). */
  missing_files: number;
  ledger_lines: number;
}

const iso = (d: Date | string | null | undefined): string | null => (d == null ? null : d instanceof Date ? d.toISOString() : d);

/** Dates as ISO strings, every other value as it is. */
function plain(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = v instanceof Date ? v.toISOString() : v;
  return out;
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

const README = (team: TeamRecord, exportedAt: string) => `adforge export of team "${team.name}" (${team.id})
Made ${exportedAt}. Archive format ${EXPORT_FORMAT_VERSION}. Every .json file is UTF-8 JSON; dates are ISO 8601 (UTC).

README.txt                this file
team.json                 the team: name, tier, credits (limit, used, period start), when it was made,
                          and the stored files its rows name that storage no longer held (missing_files)
generations/<id>.json     one generation each: operation, type, kind, status, credits, the request as
                          sent (params), what the engine reported (result_meta), error, dates, and
                          "files": the archive paths of its results
generations/<id>/<file>   its result files, byte for byte as the API serves them
deleted-generations.json  generations deleted earlier: what the ledger still names (type, credits, dates)
ledger.csv                the credit ledger, oldest line first, with the columns of GET /account/ledger:
                          ${LEDGER_CSV_COLUMNS.join(', ')}
credit-top-ups.json       credits added by the team's owners (who, how many, when)
products.json             products; "image_file" is the archive path of the product image
products/<id>/<file>      product images
brands.json               brands
avatars.json              custom avatars; "image_file" is the archive path of the face
avatars/<id>/<file>       avatar images
voiceovers.json           voiceovers; "audio_file" is the archive path of the audio
voiceovers/<id>/<file>    voiceover audio
campaigns.json            campaigns with their counts and every row: its request, state, and the
                          generation or voiceover it made (generation_deleted when deleted since)
ad-library-scrapes.json   the team's ad library scrape requests (the scraped ads are shared, not the team's)
members.json              the dashboard's people: email, role, active, when added (no password data)
api-keys.json             API keys: name, hint (first and last characters), webhook URL, rate limit,
                          dates; never a key, its digest or a webhook secret
webhook-deliveries.json   every webhook attempt: event, URL, the exact body sent, the answer, latency
uploads.json              uploaded input files (an empty list when the server has none); uploads/<id>/<file> the files

Keys, key digests, webhook secrets, password hashes, sessions and sign-in links are never exported.
`;

/**
 * Everything of a team as one archive (a gzipped tar): its rows as JSON, its ledger as CSV, its
 * stored files streamed from storage (disk or S3) into the archive one at a time.
 */
export function createTeamExporter({ db, storage }: Pick<Deps, 'db' | 'storage'>) {
  async function addRows(archive: ArchiveWriter, name: string, rows: Record<string, unknown>[]): Promise<void> {
    await archive.addText(name, json(rows.map(plain)));
  }

  /** Adds the stored file under `dir`; answers its archive path, or null when storage no longer holds it. */
  async function addFile(archive: ArchiveWriter, dir: string, key: string, missing: string[]): Promise<string | null> {
    const name = `${dir}/${path.posix.basename(key)}`;
    if (await archive.addStored(name, key)) return name;
    missing.push(key);
    return null;
  }

  async function generationJson(archive: ArchiveWriter, g: GenerationRow, missing: string[]): Promise<{ files: number }> {
    const files: string[] = [];
    for (const [i, key] of g.result_keys.entries()) {
      // Results are numbered by the runner; the index keeps two results of one name apart.
      const name = `generations/${g.id}/${String(i + 1)}-${path.posix.basename(key)}`;
      if (await archive.addStored(name, key)) files.push(name);
      else missing.push(key);
    }
    const view = {
      id: g.id,
      operation: g.operation,
      type: g.type,
      kind: g.kind,
      status: g.status,
      credits: g.credits,
      params: g.params,
      result_meta: g.result_meta,
      error: g.error,
      source_generation_id: g.source_generation_id,
      api_key_id: g.api_key_id,
      created_at: iso(g.created_at),
      completed_at: iso(g.completed_at),
      files,
    };
    await archive.addText(`generations/${g.id}.json`, json(view));
    return { files: files.length };
  }

  async function ledgerCsv(archive: ArchiveWriter, teamId: string): Promise<number> {
    let lines = 0;
    await archive.addSpooled('ledger.csv', async (push) => {
      await push(stringify([[...LEDGER_CSV_COLUMNS]]));
      for (let after = 0; ; ) {
        const batch = await ledgerLinesAfter(db, teamId, after, LEDGER_LINES_PER_READ);
        if (!batch.length) break;
        await push(
          stringify(
            batch.map((l) => [l.id, iso(l.created_at), l.kind, l.amount, l.subject_type === 'generation' ? l.subject_id : '', l.subject_type ?? '', l.subject_id ?? '', l.note ?? '', l.used_after]),
          ),
        );
        lines += batch.length;
        after = Number(batch.at(-1)!.id);
      }
    });
    return lines;
  }

  /** `audit`: who asked, recorded as the export's start (the operator at the CLI unless said otherwise); false when the caller recorded it. */
  async function write(teamId: string, out: Writable, opts: { audit?: AuditActor | false } = {}): Promise<ExportSummary> {
    const team = await findTeamRecord(db, requireUuid(teamId, 'team'));
    if (!team || team.deleted_at) throw new AppError('not_found', 'Team not found');
    if (opts.audit !== false) await recordAudit(db, team.id, opts.audit ?? operatorActor(), 'team.export_started', { via: 'cli' });
    const exportedAt = new Date().toISOString();
    const archive = await openArchive(out, storage);
    const missing: string[] = [];
    let files = 0;
    let generations = 0;
    try {
      await archive.addText('README.txt', README(team, exportedAt));

      for (let after: string | null = null; ; ) {
        const batch: GenerationRow[] = await teamGenerationsAfter(db, team.id, after, GENERATIONS_PER_READ);
        if (!batch.length) break;
        for (const g of batch) files += (await generationJson(archive, g, missing)).files;
        generations += batch.length;
        after = batch.at(-1)!.id;
      }
      await addRows(archive, 'deleted-generations.json', await teamRows(db, teamQueries.deletedGenerations(team.id)));
      const ledgerLines = await ledgerCsv(archive, team.id);
      await addRows(archive, 'credit-top-ups.json', await teamRows(db, teamQueries.topUps(team.id)));

      const withFile = async (dir: string, rows: Record<string, unknown>[], keyColumn: string, fileColumn: string) => {
        const out: Record<string, unknown>[] = [];
        for (const { [keyColumn]: key, ...rest } of rows) {
          const name = typeof key === 'string' ? await addFile(archive, `${dir}/${String(rest.id)}`, key, missing) : null;
          if (name) files++;
          out.push({ ...rest, [fileColumn]: name });
        }
        return out;
      };
      await addRows(archive, 'products.json', await withFile('products', await teamRows(db, teamQueries.products(team.id)), 'image_key', 'image_file'));
      await addRows(archive, 'brands.json', (await teamRows(db, teamQueries.brands(team.id))).map(({ team_id: _t, ...b }) => b));
      await addRows(archive, 'avatars.json', await withFile('avatars', await teamRows(db, teamQueries.avatars(team.id)), 'image_key', 'image_file'));
      await addRows(archive, 'voiceovers.json', await withFile('voiceovers', await teamRows(db, teamQueries.voiceovers(team.id)), 'audio_key', 'audio_file'));

      const campaigns = [];
      for (const c of await teamRows<{ id: string }>(db, teamQueries.campaigns(team.id))) {
        campaigns.push({ ...plain(c), rows: (await teamRows(db, teamQueries.campaignRows(c.id))).map(plain) });
      }
      await archive.addText('campaigns.json', json(campaigns));
      await addRows(archive, 'ad-library-scrapes.json', await teamRows(db, teamQueries.scrapes(team.id)));
      await addRows(archive, 'members.json', await teamRows(db, teamQueries.members(team.id)));
      await addRows(archive, 'api-keys.json', await teamRows(db, teamQueries.apiKeys(team.id)));
      await archive.addSpooled('webhook-deliveries.json', async (push) => {
        const rows = await teamRows(db, teamQueries.webhookDeliveries(team.id));
        await push('[');
        for (const [i, row] of rows.entries()) await push(`${i ? ',' : ''}\n${JSON.stringify(plain(row))}`);
        await push('\n]\n');
      });
      await addRows(archive, 'uploads.json', await withFile('uploads', await teamUploads(db, team.id), 'storage_key', 'file'));

      await archive.addText(
        'team.json',
        json({
          format_version: EXPORT_FORMAT_VERSION,
          exported_at: exportedAt,
          id: team.id,
          name: team.name,
          tier: team.tier,
          credits_limit: team.credits_limit,
          credits_used: team.credits_used,
          period_started_at: iso(team.period_started_at),
          created_at: iso(team.created_at),
          missing_files: missing,
        }),
      );
      await archive.finish();
      return { team_id: team.id, generations, files, missing_files: missing.length, ledger_lines: ledgerLines };
    } catch (e) {
      await archive.abort(e instanceof Error ? e : new Error(String(e)));
      throw e;
    }
  }

  return { write };
}
export type TeamExporter = ReturnType<typeof createTeamExporter>;
