import { CAMPAIGN_EVENTS_CHANNEL, GENERATION_EVENTS_CHANNEL } from './channels.ts';
import type { EventBus } from './pg-events.ts';

const isTeamEvent = (teamId: string) => (p: unknown): p is { id: string; team_id: string } =>
  typeof p === 'object' && p !== null && (p as { team_id?: unknown }).team_id === teamId;

/**
 * Something of a campaign may have changed: a notice about the campaign itself (rows submitted) or
 * about any generation of its team (one of its rows finishing). Ticks come at most every
 * `settleMs` (bursts are merged) and at least every `pollMs`, which also covers events missed
 * while the bus reconnects. `ready` resolves once both channels listen.
 */
export function campaignTicks(bus: EventBus, { teamId, campaignId, settleMs = 200, pollMs = 5000 }: { teamId: string; campaignId: string; settleMs?: number; pollMs?: number }) {
  const own = bus.subscribe(CAMPAIGN_EVENTS_CHANNEL, (p): p is { id: string } => isTeamEvent(teamId)(p) && (p as { id: string }).id === campaignId);
  const generations = bus.subscribe(GENERATION_EVENTS_CHANNEL, isTeamEvent(teamId));
  let closed = false;
  let wake: (() => void) | undefined;
  let pending = false;
  const pump = async (it: AsyncIterator<unknown>) => {
    for (;;) {
      const next = await it.next();
      if (next.done || closed) return;
      pending = true;
      wake?.();
    }
  };
  void pump(own);
  void pump(generations);

  return {
    ready: Promise.all([own.ready, generations.ready]).then(() => undefined),
    /** Resolves on the next tick; false once closed. */
    async next(): Promise<boolean> {
      if (closed) return false;
      if (!pending) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
      await new Promise((r) => setTimeout(r, settleMs));
      pending = false;
      return !closed;
    },
    async close(): Promise<void> {
      closed = true;
      wake?.();
      await Promise.all([own.return(), generations.return()]);
    },
  };
}
