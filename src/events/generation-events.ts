import { GENERATION_EVENTS_CHANNEL } from './channels.ts';
import type { EventBus, EventSubscription } from './pg-events.ts';


/** What notifyGenerationChanged sends: ids only, subscribers read the row fresh. */
export type GenerationEvent = { id: string; team_id: string; status: string };

export function isGenerationEvent(payload: unknown): payload is GenerationEvent {
  if (typeof payload !== 'object' || payload === null) return false;
  const p = payload as Record<string, unknown>;
  return typeof p.id === 'string' && typeof p.team_id === 'string' && typeof p.status === 'string';
}

/**
 * Generation changes of one team (always: a subscriber never sees another team's ids), optionally of
 * one generation. Filtering happens before queueing, so other teams' traffic cannot crowd this
 * subscriber's bounded queue.
 */
export function subscribeGenerationEvents(
  bus: EventBus,
  { teamId, generationId }: { teamId: string; generationId?: string },
): EventSubscription<GenerationEvent> {
  return bus.subscribe(
    GENERATION_EVENTS_CHANNEL,
    (p): p is GenerationEvent =>
      isGenerationEvent(p) && p.team_id === teamId && (generationId === undefined || p.id === generationId),
  );
}
