import type { CheckTally, Invariant } from './invariants.ts';
import type { LoadRecord } from './load.ts';
import { onDatabase } from './cluster.ts';

export interface SoakReport {
  seconds: number;
  load: LoadRecord;
  faults: Map<string, number>;
  checks: Map<Invariant, CheckTally>;
  campaign: { rows: number; finished: boolean };
  drainedSeconds: number;
  /** What the service made of it, read from the database at the end. */
  outcome: Outcome | undefined;
  failed: boolean;
}

export interface Outcome {
  generations: Record<string, number>;
  refunded: number;
  /** Failed by the deadline sweeper rather than by their own work. */
  timedOut: number;
  webhooks: { ok: number; failed: number };
  providerJobs: Record<string, number>;
}

export async function readOutcome(url: string): Promise<Outcome | undefined> {
  return onDatabase(url, async (c) => {
    const count = async (q: string) => Object.fromEntries((await c.query<{ k: string; n: number }>(q)).rows.map((r) => [r.k, r.n]));
    return {
      generations: await count(`select case when status = 'failed' and error = 'cancelled' then 'cancelled' else status end as k, count(*)::int as n from generations group by 1 order by 1`),
      refunded: Number((await c.query(`select count(*)::int as n from credit_ledger where kind = 'refund'`)).rows[0].n),
      timedOut: Number((await c.query(`select count(*)::int as n from generations where status = 'failed' and error like 'timed out%'`)).rows[0].n),
      webhooks: (await c.query(`select count(*) filter (where ok)::int as ok, count(*) filter (where not ok)::int as failed from webhook_deliveries`)).rows[0],
      providerJobs: await count(`select state as k, count(*)::int as n from upstream_jobs group by 1 order by 1`),
    };
  });
}

const listed = (counts: Record<string, number>) => Object.entries(counts).map(([k, n]) => `${k} ${n}`).join(', ');

/** The table printed at the end and written to bench/RESULTS-soak.md. */
export function soakTable(r: SoakReport): string {
  const byStatus = new Map<number, number>();
  const byKind = new Map<string, number>();
  for (const a of r.load.answers) {
    byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    byKind.set(a.kind, (byKind.get(a.kind) ?? 0) + 1);
  }
  const lines = [
    `Soak of ${r.seconds} s: ${r.failed ? 'FAILED' : 'every invariant held'}`,
    '',
    '| Load held | |',
    '|---|---|',
    `| requests answered | ${r.load.answers.length} (${(r.load.answers.length / r.seconds).toFixed(1)}/s) |`,
    ...[...byKind.entries()].sort().map(([k, n]) => `| ${k} | ${n} |`),
    `| answers by status | ${[...byStatus.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s === 0 ? 'no connection' : s}: ${n}`).join(', ')} |`,
    `| generations accepted | ${r.load.accepted.size} |`,
    `| voiceovers made | ${r.load.voiceovers} |`,
    `| Idempotency-Key replays | ${r.load.replays.same} answered their first generation, ${r.load.replays.different} did not |`,
    `| campaign | ${r.campaign.rows} rows, ${r.campaign.finished ? 'finished' : 'NOT finished'} |`,
    `| after the load: everything accepted finished in | ${r.drainedSeconds.toFixed(1)} s |`,
    ...(r.outcome
      ? [
          `| generations at the end (campaign rows included) | ${listed(r.outcome.generations)}; ${r.outcome.refunded} refunds |`,
          `| generations ended by their deadline (the sweeper) | ${r.outcome.timedOut} |`,
          `| webhook attempts recorded | ${r.outcome.webhooks.ok} delivered, ${r.outcome.webhooks.failed} failed (not retried, by the spec) |`,
          `| provider (fal) attempts | ${listed(r.outcome.providerJobs)} |`,
        ]
      : []),
    '',
    '| Fault injected | times |',
    '|---|---|',
    ...[...r.faults.entries()].map(([f, n]) => `| ${f} | ${n} |`),
    '',
    '| Invariant | checks passed | failed | skipped (database away) |',
    '|---|---|---|---|',
    ...[...r.checks.entries()].map(([name, t]) => `| ${name} | ${t.passed} | ${t.failed} | ${t.skipped} |`),
  ];
  const failures = [...r.checks.entries()].filter(([, t]) => t.failures.length);
  if (failures.length) lines.push('', 'Failures:', ...failures.flatMap(([name, t]) => t.failures.map((f) => `- ${name}: ${f}`)));
  return lines.join('\n');
}
