import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { LIST_SEPARATOR } from '../../domain/campaign-rows.ts';
import { ApiError } from './api.ts';
import type { CsvFile } from './csv-read.ts';
import { CliError, EXIT_USAGE } from './errors.ts';

/** A URL column: its cells name input files (`image_url`, `reference_image_urls`, ...). */
const isUrlColumn = (name: string) => /_urls?$/.test(name);
/** A cell with a scheme (`https:`, `upload:`, `ftp:`) is left to the server; anything else is a path on this machine. */
const hasScheme = (v: string) => /^[a-z][a-z0-9+.-]+:/i.test(v);

export interface LocalFile {
  sha256: string;
  size: number;
  /** The first path it was found under, for messages. */
  path: string;
}

export interface LocalFiles {
  /** Absolute path -> its file's content hash. */
  byPath: Map<string, string>;
  /** Distinct contents, each uploaded once. */
  byHash: Map<string, LocalFile>;
  /** Content hash -> `upload:<id>`, once uploaded. */
  refs: Map<string, string>;
  /** The CSV's folder, which relative paths start from. */
  base: string;
}

const items = (column: string, cell: string) => (column.endsWith('_urls') ? cell.split(LIST_SEPARATOR) : [cell]).map((s) => s.trim());

/** Every local path in the file's URL columns, read and hashed: one entry per distinct content. */
export async function findLocalFiles(csv: CsvFile, csvPath: string): Promise<LocalFiles> {
  const base = path.dirname(path.resolve(csvPath));
  const found: LocalFiles = { byPath: new Map(), byHash: new Map(), refs: new Map(), base };
  for await (const row of csv.rows()) {
    if (row.blank) continue;
    for (const [column, cell] of Object.entries(row.cells)) {
      if (!isUrlColumn(column)) continue;
      for (const value of items(column, cell)) {
        if (!value || hasScheme(value)) continue;
        const abs = path.resolve(base, value);
        if (found.byPath.has(abs)) continue;
        let hashed: { sha256: string; size: number };
        try {
          hashed = await hashFile(abs);
        } catch (e) {
          throw new CliError(EXIT_USAGE, `row ${row.row_number}, ${column}: cannot read the local file ${value} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); paths are relative to the CSV's folder`);
        }
        const { sha256, size } = hashed;
        found.byPath.set(abs, sha256);
        if (!found.byHash.has(sha256)) found.byHash.set(sha256, { sha256, size, path: value });
      }
    }
  }
  return found;
}

/** The cells as the server gets them: each local path replaced by its upload's `upload:<id>`. */
export function withUploads(local: LocalFiles, cells: Record<string, string>): Record<string, string> {
  if (local.byPath.size === 0) return cells;
  const out: Record<string, string> = {};
  for (const [column, cell] of Object.entries(cells)) {
    if (!isUrlColumn(column)) {
      out[column] = cell;
      continue;
    }
    const swapped = items(column, cell).map((v) => {
      if (!v || hasScheme(v)) return v;
      return local.refs.get(local.byPath.get(path.resolve(local.base, v)) ?? '') ?? v;
    });
    out[column] = swapped.join(LIST_SEPARATOR);
  }
  return out;
}

const MB = 1024 * 1024;
export const sizeWords = (bytes: number) => (bytes >= MB ? `${(bytes / MB).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`);

/**
 * Uploads each distinct content once (POST /api/v1/uploads, the bytes as the body). The
 * Idempotency-Key is the content's hash: a re-run within a day gets the same upload back.
 */
export async function uploadLocalFiles(local: LocalFiles, o: { endpoint: URL; key: string; ca: string[] | undefined }): Promise<void> {
  const url = new URL(o.endpoint);
  url.pathname = url.pathname.replace(/\/graphql$/, '/api/v1/uploads');
  const dispatcher = new Agent({ connect: o.ca ? { ca: o.ca } : {} });
  try {
    for (const file of local.byHash.values()) {
      const abs = path.resolve(local.base, file.path);
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${o.key}`, 'content-type': 'application/octet-stream', 'content-length': String(file.size), 'idempotency-key': `adforge-campaign-upload-${file.sha256}` },
          // Streamed from the disk with its length: a 200 MB video is never whole in the CLI's memory.
          body: createReadStream(abs),
          dispatcher,
        });
      } catch (e) {
        throw new ApiError('network_error', `cannot upload ${file.path}: ${(e as Error).message}`);
      }
      const text = await res.body.text();
      let body: { url?: string; error?: { code?: string; message?: string } } = {};
      try {
        body = JSON.parse(text);
      } catch {
        // an answer that is not JSON is reported by its status below
      }
      if (res.statusCode !== 201 || typeof body.url !== 'string') {
        const why = body.error?.message ?? `HTTP ${res.statusCode}`;
        throw new CliError(EXIT_USAGE, `${file.path}: the upload was refused: ${why}`);
      }
      local.refs.set(file.sha256, body.url);
    }
  } finally {
    await dispatcher.close();
  }
}

/** A file's SHA-256 and size, read as a stream: the CLI never holds a whole video. */
async function hashFile(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  await pipeline(createReadStream(file), async (chunks: AsyncIterable<Buffer>) => {
    for await (const chunk of chunks) {
      size += chunk.length;
      hash.update(chunk);
    }
  });
  return { sha256: hash.digest('hex'), size };
}
