import { subscribeGenerationEvents } from '../../../events/generation-events.ts';
import type { GenerationDetail } from '../../../services/generations/views.ts';
import { builder } from '../builder.ts';
import { liveSubscription, principalOf, servicesFor } from '../request-context.ts';
import { GenerationRef } from './generation.ts';

const services = servicesFor('generationReader');

// The bus hands the same event object to every subscription it matches, and those are all of the
// event's team: one read serves them all (a thousand open subscriptions cost one read, not a thousand).
const reads = new WeakMap<object, Promise<GenerationDetail>>();
function readOnce(event: object, read: () => Promise<GenerationDetail>): Promise<GenerationDetail> {
  let pending = reads.get(event);
  if (!pending) {
    pending = read();
    reads.set(event, pending);
  }
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
              current = await services(ctx).generationReader.get(p, String(id));
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
            for await (const e of events) yield await readOnce(e, () => services(ctx).generationReader.get(p, e.id));
          } finally {
            await events.return();
          }
        })()),
      resolve: (g: GenerationDetail) => g,
    }),
  }),
});
