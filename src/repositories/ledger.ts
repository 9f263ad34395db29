import { sql, type Insertable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { Page } from '../domain/inputs.ts';
import type { CreditLedgerTable } from '../db/types.ts';
import { fetchPage, type PageOf } from './fetch-page.ts';

export async function appendLedger(db: Db, entry: Insertable<CreditLedgerTable>): Promise<void> {
  await db.insertInto('credit_ledger').values(entry).execute();
}

export interface LedgerFilter {
  generationId?: string | undefined;
  kind?: CreditLedgerTable['kind'] | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

export interface LedgerLine {
  id: string;
  kind: CreditLedgerTable['kind'];
  amount: number;
  subject_type: string | null;
  subject_id: string | null;
  note: string | null;
  created_at: Date;
  used_after: number;
}

/**
 * The team's ledger, newest first, each line with the credits used after it: the running sum of
 * every line of the team up to it, in the order they were written (filters pick lines, they do
 * not change the sums).
 */
export async function listLedger(db: Db, teamId: string, f: LedgerFilter, page: Page): Promise<PageOf<LedgerLine>> {
  const running = db
    .selectFrom('credit_ledger')
    .select(['id', 'kind', 'amount', 'subject_type', 'subject_id', 'note', 'created_at'])
    .select(sql<number>`sum(amount) over (order by id)`.as('used_after'))
    .where('team_id', '=', teamId)
    .as('l');
  let base = db.selectFrom(running);
  if (f.generationId) base = base.where('subject_type', '=', 'generation').where('subject_id', '=', f.generationId);
  if (f.kind) base = base.where('kind', '=', f.kind);
  if (f.since) base = base.where('created_at', '>=', f.since);
  if (f.until) base = base.where('created_at', '<', f.until);
  const { rows, total } = await fetchPage(base, (q) => q.selectAll().orderBy('id', 'desc'), page);
  return { rows: rows.map((r) => ({ ...r, id: String(r.id), used_after: Number(r.used_after) })), total };
}

export interface SpendRow {
  day: string;
  kind: string;
  credits: number;
}

/** Credits spent (debits less refunds) per UTC day and what they paid for: a generation's type, else the subject's kind. */
export async function spendByDay(db: Db, teamId: string, since: Date): Promise<SpendRow[]> {
  const rows = await sql<{ day: string; kind: string; credits: string }>`
    select to_char(date_trunc('day', l.created_at at time zone 'UTC'), 'YYYY-MM-DD') as day,
           coalesce(g.type, d.type, l.subject_type, 'other') as kind,
           sum(l.amount) as credits
    from credit_ledger l
    left join generations g on l.subject_type = 'generation' and g.id = l.subject_id
    left join deleted_generations d on l.subject_type = 'generation' and d.id = l.subject_id
    where l.team_id = ${teamId} and l.kind in ('debit', 'refund') and l.created_at >= ${since}
    group by 1, 2
    having sum(l.amount) <> 0
    order by 1, 2`.execute(db);
  return rows.rows.map((r) => ({ day: r.day, kind: r.kind, credits: Number(r.credits) }));
}
