import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../../src/db/pool.ts';
import { inputCopyKeys } from '../../src/services/generations/input-keys.ts';

/** One generation of a cell, once the cell settled. */
export interface GenerationFacts {
  status: string;
  error: string | null;
  credits: number;
  /** The sum of its ledger lines: its price while it stands, 0 once refunded. */
  ledger: number;
  /** The sweeper ended it at its deadline (nothing else did). */
  swept: boolean;
}

/** What a cell left behind, read once it settled. */
export interface CellFacts {
  /** The cell's generations: the one whose call is faulted, then any made beside it (batch reads). */
  generations: GenerationFacts[];
  /** It settled: every generation ended, and nothing left queued or in flight. */
  settled: boolean;
  /** The armed fault was applied to a request (the call was made). */
  injected: boolean;
  /** Billable jobs each fake accepted during the cell, and how many one generation may pay for (default 1). */
  billed: Record<string, number>;
  units: Record<string, number>;
  /** How much the team's credits_used moved during the cell, and the sum of the ledger lines written meanwhile. */
  teamUsed: number;
  teamLedger: number;
  /** Files the cell stored that no row names. */
  unnamedFiles: string[];
  /** Results a completed generation names that storage does not hold. */
  missingResults: string[];
}

export interface Verdict {
  outcome: string;
  broken: Array<{ short: string; detail: string }>;
}

const outcomeOf = (g: GenerationFacts, paid: boolean) =>
  g.status === 'completed' ? 'completed' : g.status === 'failed' ? `${g.swept ? 'timed out' : 'failed'}, refunded${paid ? ', paid' : ''}` : g.status;

/** The cell's outcome for the table, and every invariant it broke. */
export function judge(f: CellFacts): Verdict {
  const broken: Verdict['broken'] = [];
  const add = (short: string, detail: string) => broken.push({ short, detail });
  if (!f.injected) add('not reached', 'the call was never made: the fault was not injected');
  for (const [fake, n] of Object.entries(f.billed)) {
    const most = (f.units[fake] ?? 1) * f.generations.length;
    if (n > most) add(`${n} jobs`, `${fake} accepted ${n} billable jobs for ${f.generations.length === 1 ? 'one generation' : `${f.generations.length} generations`} (at most ${most})`);
  }
  f.generations.forEach((g, i) => {
    const which = i === 0 ? 'the generation' : `generation ${i + 1} (beside it)`;
    if (!f.settled || g.status === 'processing') add('not ended', `${which} did not end by its deadline (status ${g.status})`);
    if (g.status === 'failed' && g.ledger !== 0) add('refund', `${which} failed, but its ledger lines sum to ${g.ledger}, not 0`);
    if (g.status === 'completed' && g.ledger !== g.credits) add('charge', `${which} completed, but its ledger lines sum to ${g.ledger}, not its price ${g.credits}`);
  });
  if (f.teamUsed !== f.teamLedger) add('ledger', `the team's credits_used moved by ${f.teamUsed}, its ledger by ${f.teamLedger}`);
  if (f.unnamedFiles.length) add('files', `stored files no row names: ${f.unnamedFiles.join(', ')}`);
  if (f.missingResults.length) add('results', `results the row names are not stored: ${f.missingResults.join(', ')}`);
  // Paid: the providers billed more than the generations that completed received.
  const perGeneration = Object.keys(f.billed).reduce((a, fake) => a + (f.units[fake] ?? 1), 0);
  const jobs = Object.values(f.billed).reduce((a, b) => a + b, 0);
  const paid = jobs > f.generations.filter((g) => g.status === 'completed').length * perGeneration;
  const outcomes = [...new Set(f.generations.map((g) => outcomeOf(g, paid)))];
  return { outcome: outcomes.join(' / '), broken };
}

/** Every file under the storage root, as keys; content-type sidecars left out, temp files kept (they are unnamed too). */
export async function storedKeys(root: string): Promise<Set<string>> {
  const out = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (!/^\..*\.meta\.json$/.test(e.name)) out.add(path.relative(root, p).split(path.sep).join('/'));
    }
  };
  await walk(root);
  return out;
}

const ledgerSum = async (db: Db, where: ReturnType<typeof sql>) => Number((await sql<{ s: string | null }>`select coalesce(sum(amount), 0) as s from credit_ledger where ${where}`.execute(db)).rows[0]!.s);

/** The team's balance and the sum of its ledger. */
export async function teamMoney(db: Db, teamId: string): Promise<{ used: number; ledger: number }> {
  const team = await db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow();
  return { used: team.credits_used, ledger: await ledgerSum(db, sql`team_id = ${teamId}`) };
}

/** The money and files of a cell's generations once it settled. */
export async function moneyAndFiles(db: Db, o: { generationIds: string[]; swept: ReadonlySet<string>; teamId: string; teamBefore: { used: number; ledger: number }; storageRoot: string; before: Set<string> }) {
  const sum = (where: ReturnType<typeof sql>) => ledgerSum(db, where);
  const after = await storedKeys(o.storageRoot);
  const named = new Set<string>();
  const missingResults: string[] = [];
  const generations: GenerationFacts[] = [];
  for (const id of o.generationIds) {
    const g = await db.selectFrom('generations').select(['status', 'error', 'credits', 'result_keys']).where('id', '=', id).executeTakeFirstOrThrow();
    for (const k of [...g.result_keys, ...inputCopyKeys(id)]) named.add(k);
    if (g.status === 'completed') missingResults.push(...g.result_keys.filter((k) => !after.has(k)));
    generations.push({ status: g.status, error: g.error, credits: g.credits, ledger: await sum(sql`subject_type = 'generation' and subject_id = ${id}`), swept: o.swept.has(id) });
  }
  const team = await teamMoney(db, o.teamId);
  return {
    generations,
    teamUsed: team.used - o.teamBefore.used,
    teamLedger: team.ledger - o.teamBefore.ledger,
    unnamedFiles: [...after].filter((k) => !o.before.has(k) && !named.has(k)),
    missingResults,
  };
}
