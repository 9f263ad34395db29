import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { onDatabase } from './cluster.ts';
import type { Outage } from './chaos.ts';
import type { LoadRecord } from './load.ts';

export interface CheckTally {
  passed: number;
  failed: number;
  skipped: number;
  failures: string[];
}

export const INVARIANTS = [
  'ledger sums to credits_used, within credits_limit (per team)',
  'no generation charged twice (one debit, at most one refund, refunds only for failures)',
  'no generation processing past its deadline',
  "every completed generation's files exist in storage",
  "every accepted request's generation exists",
  'each webhook event attempted at most once',
  'the only 5xx were 503s while the database was away',
  'an Idempotency-Key replay answers its first generation',
  'the provider never sent one generation twice (paid once)',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

/**
 * The soak's checks, run every few seconds under chaos and once at the end. A check that cannot
 * reach the database (it is being restarted) is counted as skipped, not passed.
 */
export function createInvariants(o: {
  databaseUrl: string;
  filesDir: string;
  load: LoadRecord;
  /** Every time the database was made unavailable. */
  outages: () => Outage[];
  receivedEventIds: () => string[];
  /** The prompt of every job the fake provider accepted: each soak create's prompt is unique. */
  providerPrompts: () => string[];
}) {
  const tallies = new Map<Invariant, CheckTally>(INVARIANTS.map((n) => [n, { passed: 0, failed: 0, skipped: 0, failures: [] }]));
  let seenAnswers = 0;
  const pass = (name: Invariant, ok: boolean, why: () => string) => {
    const t = tallies.get(name)!;
    if (ok) t.passed++;
    else {
      t.failed++;
      if (t.failures.length < 10) t.failures.push(`${new Date().toISOString()}: ${why()}`);
    }
  };

  async function databaseChecks(c: pg.Client, final: boolean): Promise<void> {
    const teams = await c.query<{ id: string; used: number; cap: number; ledger: number }>(
      `select t.id, t.credits_used as used, t.credits_limit as cap, coalesce((select sum(amount) from credit_ledger l where l.team_id = t.id), 0)::int as ledger from teams t`,
    );
    const bad = teams.rows.filter((t) => t.used !== t.ledger || t.used > t.cap);
    pass(INVARIANTS[0], bad.length === 0, () => JSON.stringify(bad.slice(0, 3)));

    const twice = await c.query(`
      select l.subject_id, count(*) filter (where l.kind = 'debit') as debits, count(*) filter (where l.kind = 'refund') as refunds, g.status
      from credit_ledger l join generations g on g.id = l.subject_id
      where l.subject_type = 'generation'
      group by l.subject_id, g.status
      having count(*) filter (where l.kind = 'debit') <> 1 or count(*) filter (where l.kind = 'refund') > 1
         or (count(*) filter (where l.kind = 'refund') = 1 and g.status <> 'failed')`);
    pass(INVARIANTS[1], twice.rowCount === 0, () => JSON.stringify(twice.rows.slice(0, 3)));

    // The sweeper runs every minute: a generation may outlive its deadline by that much.
    const late = await c.query(`select id, deadline_at from generations where status = 'processing' and deadline_at < now() - interval '90 seconds'`);
    const left = final ? await c.query(`select id from generations where status = 'processing'`) : { rowCount: 0, rows: [] };
    pass(INVARIANTS[2], late.rowCount === 0 && left.rowCount === 0, () => `${late.rowCount} past the deadline, ${left.rowCount} still processing at the end: ${JSON.stringify([...late.rows, ...left.rows].slice(0, 3))}`);

    const done = await c.query<{ id: string; result_keys: string[] }>(`select id, result_keys from generations where status = 'completed' order by completed_at desc ${final ? '' : 'limit 40'}`);
    const missing: string[] = [];
    for (const g of done.rows) {
      for (const key of g.result_keys) {
        await fs.access(path.join(o.filesDir, key)).catch(() => missing.push(`${g.id}: ${key}`));
      }
    }
    pass(INVARIANTS[3], missing.length === 0 && done.rows.every((g) => g.result_keys.length > 0), () => `missing: ${missing.slice(0, 3).join(', ')}`);

    const ids = [...o.load.accepted.keys()];
    const found = await c.query<{ id: string }>(`select id from generations where id = any($1::uuid[])`, [ids]);
    const have = new Set(found.rows.map((r) => r.id));
    const lost = ids.filter((id) => !have.has(id));
    pass(INVARIANTS[4], lost.length === 0, () => `${lost.length} of ${ids.length} missing: ${lost.slice(0, 3).join(', ')}`);

    const hooks = await c.query(`select generation_id, event, count(*)::int as n from webhook_deliveries where redelivery_of is null and generation_id is not null group by 1, 2 having count(*) > 1`);
    const twiceReceived = repeated(o.receivedEventIds());
    pass(INVARIANTS[5], hooks.rowCount === 0 && twiceReceived.length === 0, () => `recorded twice: ${JSON.stringify(hooks.rows.slice(0, 3))}; received twice: ${JSON.stringify(twiceReceived.slice(0, 3))}`);
  }

  function answerChecks(): void {
    const answers = o.load.answers.slice(seenAnswers);
    seenAnswers = o.load.answers.length;
    // A 503 counts as the outage's from its start until 10 s after the database is back.
    const windows = o.outages().map(([a, b]) => [a, (b ?? Date.now()) + 10_000] as const);
    const wrong = answers.filter((a) => a.status >= 500 && (a.status !== 503 || !windows.some(([s, e]) => a.at >= s && a.at <= e)));
    pass(INVARIANTS[6], wrong.length === 0, () => wrong.slice(0, 5).map((a) => `${a.kind} ${a.status} at ${new Date(a.at).toISOString()}`).join('; '));
    pass(INVARIANTS[7], o.load.replays.different === 0, () => `${o.load.replays.different} replays made another generation`);
    const again = repeated(o.providerPrompts());
    pass(INVARIANTS[8], again.length === 0, () => `${again.length} generations sent again: ${JSON.stringify(again.slice(0, 3))}`);
  }

  return {
    tallies,
    async check(final = false): Promise<void> {
      answerChecks();
      const ran = await onDatabase(o.databaseUrl, async (c) => {
        await databaseChecks(c, final);
        return true;
      });
      if (!ran) for (const name of INVARIANTS.slice(0, 6)) tallies.get(name)!.skipped++;
    },
    failed: () => [...tallies.values()].some((t) => t.failed > 0),
  };
}

/** The values seen more than once, with how often. */
function repeated(values: string[]): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].filter(([, n]) => n > 1);
}
