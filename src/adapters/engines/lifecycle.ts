import { GENERATION_OPERATIONS, IMAGE_MODELS, VIDEO_MODELS, isImageOperation } from '../../domain/generation-types.ts';
import { LIPSYNC_MODELS } from '../../domain/video-inputs.ts';

/*
 * Model lifecycle: each provider keeps one dated table of the models and endpoints adforge can send
 * work to there (its folder's <name>-lifecycle.ts, pure data, shown in docs/providers.md), and the
 * decisions below read it. A route that sends a model straight to a provider that retired it stops
 * the start; a deprecated one is a warning with its date; `adforge providers check` reports both.
 */

export type LifecycleStatus = 'live' | 'deprecated' | 'retired';

export interface LifecycleEntry {
  /** The provider's own name for it: a model id, an endpoint id. */
  readonly id: string;
  /** Our names (a model, or an operation that takes none) that reach it with the provider's default settings. */
  readonly serves: readonly string[];
  readonly status: LifecycleStatus;
  /** retired: the day it was shut down; deprecated: the day the provider announced it; live: the date of the newest source that shows it served. */
  readonly date: string;
  /** deprecated: the shutdown date the provider announced, when it announced one. */
  readonly shutdown?: string;
  /** Where the status was read, in plain words (a page, a repository file at a commit). */
  readonly source: string;
  /** What else the sources say that an operator needs (shown in docs/providers.md). */
  readonly note?: string;
  /** What the provider names to use instead, in its own names. */
  readonly successor?: string;
}

export interface LifecycleTable {
  /** The provider as ENGINE_ROUTES names it. */
  readonly provider: string;
  /** The day every source of the table was last read. */
  readonly read: string;
  /** The variable that maps our names to this provider's ids (an operator may choose another id there). */
  readonly mapping?: string;
  /** What the table leaves out, and why (a provider whose API names no model). */
  readonly note?: string;
  readonly entries: readonly LifecycleEntry[];
}

/** What a route meets at one provider for one of our names. */
export interface LifecycleFinding {
  /** The ENGINE_ROUTES key that sends it there. */
  readonly route: string;
  readonly provider: string;
  /** Our name: a model, or an operation that takes none. */
  readonly name: string;
  readonly entry: LifecycleEntry;
  /** The entry's status on the day asked: a deprecated entry past its announced shutdown counts as retired. */
  readonly status: LifecycleStatus;
  /** The day of that status (for a deprecated entry past its shutdown: the shutdown). */
  readonly date: string;
}

const RANK: Record<LifecycleStatus, number> = { live: 0, deprecated: 1, retired: 2 };

/** An entry's status on `today` (YYYY-MM-DD). */
export function statusOn(entry: LifecycleEntry, today: string): { status: LifecycleStatus; date: string } {
  if (entry.status === 'deprecated' && entry.shutdown && entry.shutdown <= today) return { status: 'retired', date: entry.shutdown };
  return { status: entry.status, date: entry.date };
}

/** The operations one of our names belongs to: a model's, or the operation itself. */
export function operationsOf(name: string): string[] {
  if ((VIDEO_MODELS as readonly string[]).includes(name)) return ['ai-video'];
  if ((IMAGE_MODELS as readonly string[]).includes(name)) return GENERATION_OPERATIONS.filter(isImageOperation);
  if ((LIPSYNC_MODELS as readonly string[]).includes(name)) return ['talking-avatar'];
  return (GENERATION_OPERATIONS as readonly string[]).includes(name) ? [name] : [];
}

/** Our names a table knows (those its entries serve by default). */
export const namesOf = (table: LifecycleTable): string[] => [...new Set(table.entries.flatMap((e) => e.serves))];

/** Our names a route key sends to a provider with this table: the key itself, the names of its operation, or all (`*`). */
export function namesUnder(key: string, table: LifecycleTable): string[] {
  const names = namesOf(table);
  if (key === '*') return names;
  if (names.includes(key)) return [key];
  return names.filter((n) => operationsOf(n).includes(key));
}

/**
 * How one of our names fares at a provider: the worst status among the ids it sends work to there
 * (`ids`: the engine's targets for the name, under the operator's settings). Ids the table does not
 * know are left to `adforge providers check`, which asks the provider.
 */
export function judge(route: string, table: LifecycleTable, name: string, ids: readonly string[], today: string): LifecycleFinding | undefined {
  let worst: LifecycleFinding | undefined;
  for (const id of ids) {
    const entry = table.entries.find((e) => e.id === id);
    if (!entry) continue;
    const { status, date } = statusOn(entry, today);
    if (!worst || RANK[status] > RANK[worst.status]) worst = { route, provider: table.provider, name, entry, status, date };
  }
  return worst;
}

/** A live way to make one of our names: a route to another provider, or a setting of the same provider's mapping variable. */
export type Alternative = { kind: 'route'; provider: string; text: string } | { kind: 'setting'; variable: string; id: string; text: string };

/**
 * A live way to make `name` instead of the provider that retired it, never one that is itself
 * retired: the provider's own default (or named successor) through its mapping variable, when that
 * is not retired; else another provider whose default ids for the name are all not retired (a live
 * one before a deprecated one).
 */
export function alternativeFor(finding: Pick<LifecycleFinding, 'provider' | 'name' | 'entry'>, tables: readonly LifecycleTable[], today: string): Alternative | undefined {
  const { provider, name, entry } = finding;
  const rank = (e: LifecycleEntry) => RANK[statusOn(e, today).status];
  const own = tables.find((t) => t.provider === provider);
  if (own?.mapping) {
    const usable = own.entries.filter((e) => e.id !== entry.id && (e.serves.includes(name) || e.id === entry.successor) && rank(e) < RANK.retired).sort((a, b) => rank(a) - rank(b));
    if (usable[0]) return { kind: 'setting', variable: own.mapping, id: usable[0].id, text: `${own.mapping}=${name}=${usable[0].id}` };
  }
  const others = tables
    .filter((t) => t.provider !== provider)
    .map((t) => ({ t, defaults: t.entries.filter((e) => e.serves.includes(name)) }))
    .filter(({ defaults }) => defaults.length > 0 && defaults.every((e) => rank(e) < RANK.retired))
    .map(({ t, defaults }) => ({ t, worst: Math.max(...defaults.map(rank)) }))
    .sort((a, b) => a.worst - b.worst);
  return others[0] ? { kind: 'route', provider: others[0].t.provider, text: `${name}=${others[0].t.provider}` } : undefined;
}

/** The finding in words: which id, its status and date, and where that was read. */
export function lifecycleWords(f: LifecycleFinding): string {
  const id = f.entry.id;
  if (f.status === 'retired') return `${f.provider} retired ${id} on ${f.date} (${f.entry.source})`;
  if (f.status === 'deprecated') {
    const end = f.entry.shutdown ? `, to shut it down on ${f.entry.shutdown}` : ', with no shutdown date yet';
    return `${f.provider} deprecated ${id} on ${f.date}${end}${f.entry.successor ? `; its successor is ${f.entry.successor}` : ''} (${f.entry.source})`;
  }
  return `${f.provider} serves ${id} (${f.entry.source}, read ${f.date})`;
}

/** What to do instead of a retired route, in words: a live alternative, or that there is none. */
export function insteadWords(f: LifecycleFinding, tables: readonly LifecycleTable[], today: string): string {
  const a = alternativeFor(f, tables, today);
  if (!a) return `no provider adforge knows still makes ${f.name}: take it out of ENGINE_ROUTES`;
  return a.kind === 'setting' ? `set ${a.variable} to a model it still serves (${a.text})` : `route it to ${a.provider} instead (${a.text})`;
}
