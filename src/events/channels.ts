// The Postgres LISTEN/NOTIFY channels of the event bus: the repositories NOTIFY on them inside
// the transaction that makes the change; the subscriptions of src/events/ LISTEN to them.
export const GENERATION_EVENTS_CHANNEL = 'adforge_generation_events';
export const SCRAPE_EVENTS_CHANNEL = 'adforge_scrape_events';
export const CAMPAIGN_EVENTS_CHANNEL = 'adforge_campaign_events';
export const KEY_REVOCATIONS_CHANNEL = 'adforge_key_revocations';
/** Sessions deleted (sign-out, a removed member, a new password): NOTIFYed by a trigger on the sessions table (migration 0013). */
export const SESSION_ENDS_CHANNEL = 'adforge_session_ends';
