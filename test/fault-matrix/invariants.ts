import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../../src/db/pool.ts';
import { inputCopyKeys } from '../../src/services/generations/input-keys.ts';

/** What a cell left behind, read once it settled. */
export interface CellFacts {
  status: string;
  error: string | null;
  /** The sweeper ended it at its deadline (nothing else did). */
  swept: boolean;
  /** It settled: ended, and nothing left queued or in flight for it. */
  settled: boolean;
  /** The armed fault was applied to a request (the call was made). */
  injected: boolean;
  /** Billable jobs each fake accepted during the cell, and how many one generation may pay for. */
  billed: Record<string, number>;
  units: Record<string, number>;
  credits: number;
  /** The sum of the generation's ledger lines: its charge while it stands, 0 once refunded. */
  generationLedger: number;
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

/** The cell's outcome for the table, and every invariant it broke. */
export function judge(f: CellFacts): Verdict {
  const broken: Verdict['broken'] = [];
  const add = (short: string, detail: string) => broken.push({ short, detail });
  if (!f.injected) add('not reached', 'the call was never made: the fault was not injected');
  for (const [fake, n] of Object.entries(f.billed)) {
    const most = f.units[fake] ?? 1;
    if (n > most) add(`${n} jobs`, `${fake} accepted ${n} billable jobs for one generation (at most ${most})`);
  }
  if (!f.settled || f.status === 'processing') add('not ended', `the generation did not end by its deadline (status ${f.status})`);
  if (f.status === 'failed' && f.generationLedger !== 0) add('refund', `failed, but its ledger lines sum to ${f.generationLedger}, not 0`);
  if (f.status === 'completed' && f.generationLedger !== f.credits) add('charge', `completed, but its ledger lines sum to ${f.generationLedger}, not its price ${f.credits}`);
  if (f.teamUsed !== f.teamLedger) add('ledger', `the team's credits_used ${f.teamUsed} is not its ledger's sum ${f.teamLedger}`);
  if (f.unnamedFiles.length) add('files', `stored files no row names: ${f.unnamedFiles.join(', ')}`);
  if (f.missingResults.length) add('results', `results the row names are not stored: ${f.missingResults.join(', ')}`);
  const paid = Object.values(f.billed).reduce((a, b) => a + b, 0) > 0;
  const outcome = f.status === 'completed' ? 'completed' : f.status === 'failed' ? `${f.swept ? 'timed out' : 'failed'}, refunded${paid ? ', paid' : ''}` : f.status;
  return { outcome, broken };
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

/** The money and files of one generation once it settled. */
export async function moneyAndFiles(db: Db, o: { generationId: string; teamId: string; storageRoot: string; before: Set<string> }) {
  const g = await db.selectFrom('generations').select(['status', 'error', 'credits', 'result_keys']).where('id', '=', o.generationId).executeTakeFirstOrThrow();
  const sum = async (where: ReturnType<typeof sql>) => Number((await sql<{ s: string | null }>`select coalesce(sum(amount), 0) as s from credit_ledger where ${where}`.execute(db)).rows[0]!.s);
  const generationLedger = await sum(sql`subject_type = 'generation' and subject_id = ${o.generationId}`);
  const teamLedger = await sum(sql`team_id = ${o.teamId}`);
  const team = await db.selectFrom('teams').select('credits_used').where('id', '=', o.teamId).executeTakeFirstOrThrow();
  const after = await storedKeys(o.storageRoot);
  const named = new Set([...g.result_keys, ...inputCopyKeys(o.generationId)]);
  const unnamedFiles = [...after].filter((k) => !o.before.has(k) && !named.has(k));
  const missingResults = g.status === 'completed' ? g.result_keys.filter((k) => !after.has(k)) : [];
  return { status: g.status, error: g.error, credits: g.credits, generationLedger, teamLedger, teamUsed: team.credits_used, unnamedFiles, missingResults };
}
