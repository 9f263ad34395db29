import type { z } from 'zod';
import { inputFieldsOf, type InputField } from './input-fields.ts';
import { CAMPAIGN_OPERATIONS, OPERATION_TABLE, type CampaignType } from './operations.ts';

/** The `type` column: each names the operation (of the table) whose request fields the row's other columns hold. */
export const CAMPAIGN_TYPES: readonly CampaignType[] = CAMPAIGN_OPERATIONS;
export type { CampaignType };

export const CAMPAIGN_SCHEMAS = Object.fromEntries(CAMPAIGN_TYPES.map((t) => [t, OPERATION_TABLE[t].schema])) as Readonly<Record<CampaignType, z.ZodType>>;

/** Columns that are not request fields. */
export const ROW_KEY = 'row_key';
export const TYPE = 'type';
export const MAX_ROW_KEY = 200;
/** List cells (`product_ids`, `reference_image_urls`) hold their items separated by this. */
export const LIST_SEPARATOR = '|';

export type FieldKind = 'string' | 'number' | 'boolean' | 'list' | 'object';

// The request fields of each type, read off the endpoint's own zod schema, so a new field of an
// endpoint is a new column without a second list to keep in step.
function kindOf(f: InputField): FieldKind {
  if (f.list) return 'list';
  if (f.type === 'object') return 'object';
  if (f.type === 'int' || f.type === 'float') return 'number';
  return f.type === 'boolean' ? 'boolean' : 'string';
}

export const CAMPAIGN_FIELDS: Readonly<Record<CampaignType, Readonly<Record<string, FieldKind>>>> = Object.fromEntries(
  CAMPAIGN_TYPES.map((t) => [t, Object.fromEntries(inputFieldsOf(CAMPAIGN_SCHEMAS[t]).map((f) => [f.name, kindOf(f)]))]),
) as Record<CampaignType, Record<string, FieldKind>>;

export interface RowProblem {
  field: string;
  message: string;
}

export type ParsedRow =
  | { ok: true; type: CampaignType; rowKey: string | null; body: Record<string, unknown> }
  | { ok: false; type: CampaignType | null; rowKey: string | null; problems: RowProblem[] };

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0']);

/** Spreadsheet headers: case and surrounding spaces do not matter. */
export const columnName = (header: string): string => header.trim().toLowerCase();

/**
 * One CSV row (column name -> cell text) to the request body of its type's endpoint. Empty cells
 * are absent fields; numbers, booleans and `|`-lists are read from text; `voice_settings.stability`
 * style columns fill an object field. A non-empty cell in a column its type does not have is a
 * problem (a typo would otherwise be dropped silently). Checks against the endpoint's own rules
 * happen after this, on the body.
 */
export function rowToRequest(cells: Readonly<Record<string, string>>): ParsedRow {
  const rawType = (cells[TYPE] ?? '').trim().toLowerCase();
  const rowKey = (cells[ROW_KEY] ?? '').trim() || null;
  const problems: RowProblem[] = [];
  if (rowKey && rowKey.length > MAX_ROW_KEY) problems.push({ field: ROW_KEY, message: `must be at most ${MAX_ROW_KEY} characters` });
  if (!(CAMPAIGN_TYPES as readonly string[]).includes(rawType)) {
    problems.push({ field: TYPE, message: rawType ? `must be one of ${CAMPAIGN_TYPES.join(', ')}` : 'is required' });
    return { ok: false, type: null, rowKey, problems };
  }
  const type = rawType as CampaignType;
  const fields = CAMPAIGN_FIELDS[type];
  const body: Record<string, unknown> = {};
  for (const [column, raw] of Object.entries(cells)) {
    if (column === TYPE || column === ROW_KEY) continue;
    const cell = raw.trim();
    if (cell === '') continue;
    const [field, sub] = column.split('.', 2) as [string, string | undefined];
    const kind = fields[field];
    if (!kind || (kind === 'object') !== (sub !== undefined)) {
      problems.push({ field: column, message: `is not a field of ${type}` });
      continue;
    }
    const value = readCell(kind, cell, sub === undefined ? raw : cell);
    if (value === undefined) {
      problems.push({ field: column, message: kind === 'boolean' ? 'must be true or false' : 'must be a number' });
      continue;
    }
    if (sub !== undefined) body[field] = { ...(body[field] as object | undefined), [sub]: value };
    else body[field] = value;
  }
  return problems.length ? { ok: false, type, rowKey, problems } : { ok: true, type, rowKey, body };
}

function readCell(kind: FieldKind, cell: string, raw: string): unknown {
  switch (kind) {
    case 'number':
    case 'object': // object members (voice_settings.*) are numbers
      return NUMBER.test(cell) ? Number(cell) : undefined;
    case 'boolean': {
      const v = cell.toLowerCase();
      return TRUE.has(v) ? true : FALSE.has(v) ? false : undefined;
    }
    case 'list':
      return cell.split(LIST_SEPARATOR).map((s) => s.trim()).filter(Boolean);
    default:
      // Text keeps its inner line breaks (a script cell may hold several lines); only the ends are trimmed.
      return raw.trim();
  }
}

/** Every problem zod finds in a body, each with its field path. */
export function zodProblems(issues: readonly z.core.$ZodIssue[]): RowProblem[] {
  return issues.map((i) => ({ field: i.path.map(String).join('.') || TYPE, message: i.message }));
}

// Which field a "not found" of the service layer is about, for per-field reports.
const NOT_FOUND_FIELDS: ReadonlyArray<[RegExp, string]> = [
  [/^Voiceover/, 'voiceover_id'],
  [/^Voice/, 'voice_id'],
  [/^Avatar/, 'avatar_id'],
  [/^Product/, 'product_id'],
  [/^Style/, 'style_id'],
  [/^Caption template/, 'template_id'],
  [/^Generation/, 'generation_id'],
];
export function fieldOfNotFound(message: string): string {
  return NOT_FOUND_FIELDS.find(([re]) => re.test(message))?.[1] ?? TYPE;
}
