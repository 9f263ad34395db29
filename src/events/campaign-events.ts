import { CAMPAIGN_EVENTS_CHANNEL } from './channels.ts';
import type { EventBus } from './pg-events.ts';

const isTeamEvent = (teamId: string) => (p: unknown): p is { id: string; team_id: string } =>
  typeof p === 'object' && p !== null && (p as { team_id?: unknown }).team_id === teamId;

/**
 * Something of a campaign has changed: its status (started, submitted) or its counts, which the
 * counters' trigger announces whenever a row or one of its generations moves them (migration
 * 0013); other events of the team never wake it. Ticks come at most every `settleMs` (bursts are
 * merged) and at least every `pollMs`, which also covers events missed while the bus reconnects.
 * `ready` resolves once the channel listens.
 */
export function campaignTicks(bus: EventBus, { teamId, campaignId, settleMs = 200, pollMs = 15_000 }: { teamId: string; campaignId: string; settleMs?: number; pollMs?: number }) {
  const own = bus.subscribe(CAMPAIGN_EVENTS_CHANNEL, (p): p is { id: string } => isTeamEvent(teamId)(p) && (p as { id: string }).id === campaignId);
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

  return {
    ready: own.ready,
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
      await own.return();
    },
  };
}
