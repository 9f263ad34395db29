import { SCRAPE_EVENTS_CHANNEL } from './channels.ts';
import type { EventBus, EventSubscription } from './pg-events.ts';


/** What notifyScrapeChanged sends when a scrape job ends: ids only, subscribers read the job fresh. */
export type ScrapeEvent = { id: string; status: string };

export function isScrapeEvent(payload: unknown): payload is ScrapeEvent {
  if (typeof payload !== 'object' || payload === null) return false;
  const p = payload as Record<string, unknown>;
  return typeof p.id === 'string' && typeof p.status === 'string';
}

/**
 * Changes of one scrape job. Jobs carry no team in their events: the library and its jobs are
 * shared by every team (a page being scraped by one team is the job another team's request joins).
 * Filtering happens before queueing, as for generations.
 */
export function subscribeScrapeEvents(bus: EventBus, { jobId }: { jobId: string }): EventSubscription<ScrapeEvent> {
  const id = jobId.toLowerCase();
  return bus.subscribe(SCRAPE_EVENTS_CHANNEL, (p): p is ScrapeEvent => isScrapeEvent(p) && p.id.toLowerCase() === id);
}

/**
 * The next event of `events`, or 'tick' when none came within `ms`, or 'closed' once the
 * subscription has ended. A `next()` still pending when the timer wins is kept for the following
 * call, so no event is handed to an abandoned waiter and lost. Callers that re-read state on a
 * tick also recover an end NOTIFied while the bus was reconnecting (NOTIFY is not queued).
 */
export function eventsOrTicks<T>(events: EventSubscription<T>, ms: number): () => Promise<'event' | 'tick' | 'closed'> {
  let pending: Promise<IteratorResult<T, undefined>> | undefined;
  return async () => {
    pending ??= events.next();
    let timer: NodeJS.Timeout | undefined;
    const tick = new Promise<'tick'>((resolve) => (timer = setTimeout(() => resolve('tick'), ms)));
    try {
      const r = await Promise.race([pending, tick]);
      if (r === 'tick') return 'tick';
      pending = undefined;
      return r.done ? 'closed' : 'event';
    } finally {
      clearTimeout(timer);
    }
  };
}

