import { subscribeGenerationEvents } from '../../../events/generation-events.ts';
import type { GenerationDetail } from '../../../services/generations/views.ts';
import { builder } from '../builder.ts';
import { liveSubscription, principalOf, servicesFor } from '../request-context.ts';
import { GenerationRef } from './generation.ts';

const services = servicesFor('generationReader');

// The bus hands one event object to every subscription it matches, and each of those follows the
// event's team: the row is read once per event and team and shared, so a thousand subscribers of a
// generation (or of its team's generations) cost one read per change, not a thousand. The team is
// part of the key so a read is only ever shared with subscribers of the team it was read for.
const reads = new WeakMap<object, Map<string, Promise<GenerationDetail>>>();
function readOnce(event: object, teamId: string, read: () => Promise<GenerationDetail>): Promise<GenerationDetail> {
  let byTeam = reads.get(event);
  if (!byTeam) reads.set(event, (byTeam = new Map()));
  let pending = byTeam.get(teamId);
  if (!pending) byTeam.set(teamId, (pending = read()));
  return pending;
}

/**
 * Events carry ids only (Postgres NOTIFY from the transaction that changed the row); each one is
 * read fresh here, so a subscriber sees what a query would, links signed anew.
 */
builder.subscriptionType({
  fields: (t) => ({
    generationUpdated: t.field({
      type: GenerationRef,
      description: 'The generation now, then on every change; ends once it has completed or failed',
      args: { id: t.arg.id({ required: true }) },
      subscribe: (_r, { id }, ctx) =>
        liveSubscription(ctx, (onEnd) => (async function* () {
          const p = principalOf(ctx);
          const events = subscribeGenerationEvents(ctx.events, { teamId: p.teamId, generationId: String(id) });
          onEnd(() => events.return());
          try {
            await events.ready;
            let current = await services(ctx).generationReader.get(p, String(id));
            yield current;
            while (current.status === 'processing') {
              const next = await events.next();
              if (next.done) return;
              current = await readOnce(next.value, p.teamId, () => services(ctx).generationReader.get(p, String(id)));
              yield current;
            }
          } finally {
            await events.return();
          }
        })()),
      resolve: (g: GenerationDetail) => g,
    }),
    generationsUpdated: t.field({
      type: GenerationRef,
      description: "Every change of any of the team's generations",
      subscribe: (_r, _a, ctx) =>
        liveSubscription(ctx, (onEnd) => (async function* () {
          const p = principalOf(ctx);
          const events = subscribeGenerationEvents(ctx.events, { teamId: p.teamId });
          onEnd(() => events.return());
          try {
            for await (const e of events) yield await readOnce(e, p.teamId, () => services(ctx).generationReader.get(p, e.id));
          } finally {
            await events.return();
          }
        })()),
      resolve: (g: GenerationDetail) => g,
    }),
  }),
});
