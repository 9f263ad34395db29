import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import { CAMPAIGN_EVENTS_CHANNEL, GENERATION_EVENTS_CHANNEL, KEY_REVOCATIONS_CHANNEL, SCRAPE_EVENTS_CHANNEL } from '../events/channels.ts';

// Ids only: subscribers read the row fresh, and NOTIFY payloads are small. Sent inside the
// caller's transaction, so a change notice goes out if and only if the change commits.

export async function notifyGenerationChanged(db: Db, g: { id: string; team_id: string; status: string }): Promise<void> {
  await sql`select pg_notify(${GENERATION_EVENTS_CHANNEL}, ${JSON.stringify({ id: g.id, team_id: g.team_id, status: g.status, at: Date.now() })})`.execute(db);
}

export async function notifyScrapeChanged(db: Db, job: { id: string; status: string }): Promise<void> {
  await sql`select pg_notify(${SCRAPE_EVENTS_CHANNEL}, ${JSON.stringify({ id: job.id, status: job.status })})`.execute(db);
}

export async function notifyCampaignChanged(db: Db, c: { id: string; team_id: string }): Promise<void> {
  await sql`select pg_notify(${CAMPAIGN_EVENTS_CHANNEL}, ${JSON.stringify({ id: c.id, team_id: c.team_id })})`.execute(db);
}

/** A revoked key: every node drops it from its key cache at once (the cache's 1 s life bounds a lost notice). */
export async function notifyKeyRevoked(db: Db, keyId: string): Promise<void> {
  await sql`select pg_notify(${KEY_REVOCATIONS_CHANNEL}, ${JSON.stringify({ key_id: keyId })})`.execute(db);
}
