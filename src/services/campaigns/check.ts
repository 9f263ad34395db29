import pLimit from 'p-limit';
import { CAMPAIGN_SCHEMAS, columnName, fieldOfNotFound, rowToRequest, zodProblems, type CampaignType, type RowProblem } from '../../domain/campaign-rows.ts';
import { AppError } from '../../domain/errors.ts';
import { MALFORMED_TEXT, malformedString } from '../../domain/validate.ts';
import { TEXT_TO_SPEECH_CREDITS } from '../../domain/pricing.ts';
import type { EngineRegistry } from '../../adapters/engines/registry.ts';
import type { Db } from '../../db/pool.ts';
import { OPERATIONS } from '../generations/operations.ts';
import { checkUploadUses } from '../uploads.ts';
import type { VoiceService } from '../voices.ts';

export interface RowInput {
  row_number: number;
  cells: Record<string, string>;
}

export type CheckedRow =
  | { row_number: number; ok: true; type: CampaignType; row_key: string | null; body: Record<string, unknown>; credits: number }
  | { row_number: number; ok: false; type: CampaignType | null; row_key: string | null; problems: RowProblem[] };

/** Rows checked at once: each may look up a voice, an avatar or a product. */
const CHECK_CONCURRENCY = 4;
export const MAX_ROWS_PER_CALL = 500;

/**
 * A row checked exactly as its endpoint would check the request (the same zod schema, the same
 * lookups of ids for the team) and priced as it would be charged. Nothing is written.
 */
export function createRowChecker(db: Db, voices: Pick<VoiceService, 'require'>, engines: Pick<EngineRegistry, 'refusal'>) {
  async function checkOne(teamId: string, input: RowInput): Promise<CheckedRow> {
    const cells = Object.fromEntries(Object.entries(input.cells).map(([k, v]) => [columnName(k), typeof v === 'string' ? v : String(v ?? '')]));
    const n = input.row_number;
    const malformed = malformedString(cells);
    if (malformed) return { row_number: n, ok: false, type: null, row_key: null, problems: [{ field: String(malformed[0]), message: MALFORMED_TEXT }] };
    const parsed = rowToRequest(cells);
    if (!parsed.ok) return { row_number: n, ok: false, type: parsed.type, row_key: parsed.rowKey, problems: parsed.problems };
    const result = CAMPAIGN_SCHEMAS[parsed.type].safeParse(parsed.body);
    if (!result.success) return { row_number: n, ok: false, type: parsed.type, row_key: parsed.rowKey, problems: zodProblems(result.error.issues) };
    try {
      let credits: number;
      if (parsed.type === 'text-to-speech') {
        await voices.require(String(parsed.body.voice_id));
        credits = TEXT_TO_SPEECH_CREDITS;
      } else {
        await checkUploadUses(db, teamId, result.data);
        const resolved = await OPERATIONS[parsed.type].resolve(db, teamId, result.data);
        const refusal = engines.refusal(parsed.type, resolved.params, resolved.attachedImages);
        if (refusal) throw new AppError('validation_error', refusal);
        credits = resolved.credits;
      }
      // The body as written (not the parsed one): the create call parses it again, like any request.
      return { row_number: n, ok: true, type: parsed.type, row_key: parsed.rowKey, body: parsed.body, credits };
    } catch (e) {
      if (!(e instanceof AppError) || e.status >= 500) throw e;
      const field = e.code === 'not_found' ? fieldOfNotFound(e.message) : e.message.split(':')[0]!;
      const message = e.code === 'validation_error' && e.message.includes(': ') ? e.message.slice(e.message.indexOf(': ') + 2) : e.message;
      return { row_number: n, ok: false, type: parsed.type, row_key: parsed.rowKey, problems: [{ field, message }] };
    }
  }

  return {
    async check(teamId: string, rows: readonly RowInput[]): Promise<CheckedRow[]> {
      if (rows.length > MAX_ROWS_PER_CALL) throw new AppError('validation_error', `rows: at most ${MAX_ROWS_PER_CALL} rows per call`);
      const seen = new Set<number>();
      for (const r of rows) {
        if (!Number.isInteger(r.row_number) || r.row_number < 1) throw new AppError('validation_error', 'rows: row_number must be a whole number from 1');
        if (seen.has(r.row_number)) throw new AppError('validation_error', `rows: row ${r.row_number} is given twice`);
        if (typeof r.cells !== 'object' || r.cells === null || Array.isArray(r.cells)) throw new AppError('validation_error', `rows: row ${r.row_number} cells must be an object of column names to text`);
        seen.add(r.row_number);
      }
      const limit = pLimit(CHECK_CONCURRENCY);
      return Promise.all(rows.map((r) => limit(() => checkOne(teamId, r))));
    },
  };
}
export type RowChecker = ReturnType<typeof createRowChecker>;
