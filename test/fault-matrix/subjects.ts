import { sql } from 'kysely';
import type { Db } from '../../src/db/pool.ts';
import { inputCopyKeys } from '../../src/services/generations/input-keys.ts';

/** One thing a cell made (a generation, an ad-library scrape), as its row says now. */
export interface SubjectRow {
  id: string;
  status: string;
  error: string | null;
  credits: number;
  /** When the sweeper ends it if it is still processing; null: it has none (its job's attempts end it). */
  deadline: Date | null;
  /** Every stored file a row names for it (a result, an input copy, a scraped ad's media). */
  named: string[];
  /** The files it must hold once completed. */
  results: string[];
}

/**
 * What a cell makes, and where its rows are: a generation (most providers), or a scrape of an ad
 * library page (ScrapeCreators). Both are charged at create and refunded when they fail.
 */
export interface Subject {
  /** In the table's and the failures' words. */
  noun: string;
  /** Its id in the create's answer. */
  idOf(answer: Record<string, unknown>): string;
  rows(db: Db, ids: readonly string[]): Promise<SubjectRow[]>;
  /** Its ledger lines' subject_type. */
  ledgerType: string;
}

export const GENERATION: Subject = {
  noun: 'generation',
  idOf: (a) => String(a.generation_id),
  ledgerType: 'generation',
  async rows(db, ids) {
    const rows = await db.selectFrom('generations').select(['id', 'status', 'error', 'credits', 'result_keys', 'deadline_at']).where('id', 'in', ids).execute();
    return rows.map((g) => ({ id: g.id, status: g.status, error: g.error, credits: g.credits, deadline: g.deadline_at, named: [...g.result_keys, ...inputCopyKeys(g.id)], results: g.result_keys }));
  },
};

export const SCRAPE: Subject = {
  noun: 'scrape',
  idOf: (a) => String(a.job_id),
  ledgerType: 'ad_library_scrape',
  async rows(db, ids) {
    const jobs = await db.selectFrom('ad_library_scrape_jobs').select(['id', 'status', 'error', 'credits']).where('id', 'in', ids).execute();
    // A scraped page's files belong to its brand and ads, whichever scrape stored them.
    const { rows } = await sql<{ key: string }>`
      select m->>'key' as key from ad_library_ads, jsonb_array_elements(media) m where m->>'key' is not null
      union all
      select profile_picture_key from ad_library_brands where profile_picture_key is not null`.execute(db);
    const named = rows.map((r) => r.key);
    return jobs.map((j) => ({ id: j.id, status: j.status, error: j.error, credits: j.credits, deadline: null, named, results: [] }));
  },
};
