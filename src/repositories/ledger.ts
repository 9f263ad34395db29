import type { Db } from '../db/pool.ts';
import type { CreditLedgerTable } from '../db/types.ts';
import type { Insertable } from 'kysely';

export async function appendLedger(db: Db, entry: Insertable<CreditLedgerTable>): Promise<void> {
  await db.insertInto('credit_ledger').values(entry).execute();
}
