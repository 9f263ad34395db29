import type { GenerationRow, UpstreamJobEventRow, UpstreamJobRow } from '../../db/types.ts';
import type { Storage } from '../../adapters/storage/storage.ts';

export interface GenerationSummary {
  id: string;
  type: string;
  status: string;
  created_at: string;
  completed_at: string | null;
  result_url: string | null;
  result_urls: string[];
  error: string | null;
  /** When the team's retention removed its stored files: result_url is null from then, status and details stay. */
  files_expired_at: string | null;
}

/**
 * The live progress of a generation, carried under a symbol: JSON (the REST answers) never shows
 * it, so those keep the spec's exact shapes, while GraphQL's `progress` and `stage` read it.
 */
export const LIVE_PROGRESS = Symbol('live progress');
export interface LiveProgress {
  /** 0 to 1, null when the engine has not said; 1 once completed; a failure keeps where it stopped. */
  progress: number | null;
  stage: string | null;
}

export interface GenerationDetail extends GenerationSummary {
  generation_id: string;
  credits: number;
  details: Record<string, unknown>;
  [LIVE_PROGRESS]?: LiveProgress;
}

// The spec's keys first for the types it lists; the rest of the stored request follows.
const DETAIL_KEYS: Record<string, string[]> = {
  'talking-avatar': ['avatar_id', 'script', 'voice_id', 'template', 'duration'],
  'ai-video': ['prompt', 'model', 'duration', 'aspect_ratio'],
  image: ['prompt', 'model', 'aspect_ratio', 'resolution', 'quantity'],
};

export async function summaryView(storage: Storage, row: GenerationRow): Promise<GenerationSummary> {
  // Every read signs anew: links live one hour from the read, not from the render.
  const urls = row.status === 'completed' ? await Promise.all(row.result_keys.map((k) => storage.signedUrl(k))) : [];
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    result_url: urls[0] ?? null,
    result_urls: urls,
    error: row.status === 'failed' ? row.error : null,
    files_expired_at: row.files_expired_at?.toISOString() ?? null,
  };
}

export async function detailView(storage: Storage, row: GenerationRow): Promise<GenerationDetail> {
  const summary = await summaryView(storage, row);
  const detail: GenerationDetail = { ...summary, generation_id: row.id, credits: row.credits, details: detailsOf(row) };
  // Not enumerable either: copies and comparisons of the REST answer never meet it.
  Object.defineProperty(detail, LIVE_PROGRESS, { value: { progress: row.progress ?? null, stage: row.stage ?? null } satisfies LiveProgress, enumerable: false });
  return detail;
}

function detailsOf(row: GenerationRow): Record<string, unknown> {
  const params = { ...row.params, ...row.result_meta };
  const group = row.kind === 'image' ? 'image' : row.type;
  const first = DETAIL_KEYS[group] ?? [];
  const out: Record<string, unknown> = {};
  for (const k of first) out[k] = params[k] ?? null;
  for (const [k, v] of Object.entries(params)) if (!(k in out)) out[k] = v;
  return out;
}

/** One attempt at a provider, as operators and the owning team see it (never a key or a provider URL). */
export interface UpstreamAttempt {
  attempt_id: string;
  provider: string;
  provider_job_id: string | null;
  state: string;
  cost: number | null;
  error: string | null;
  polls: number;
  result_refetches: number;
  created_at: string;
  updated_at: string;
  events: { state: string; detail: string | null; at: string }[];
}

export function upstreamAttemptView(j: UpstreamJobRow & { events: UpstreamJobEventRow[] }): UpstreamAttempt {
  return {
    attempt_id: j.id,
    provider: j.provider,
    provider_job_id: j.provider_job_id,
    state: j.state,
    cost: j.cost,
    error: j.error,
    polls: j.polls,
    result_refetches: j.refetches,
    created_at: j.created_at.toISOString(),
    updated_at: j.updated_at.toISOString(),
    events: j.events.map((e) => ({ state: e.state, detail: e.detail, at: e.at.toISOString() })),
  };
}
