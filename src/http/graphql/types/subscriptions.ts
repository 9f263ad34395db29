import { subscribeGenerationEvents } from '../../../events/generation-events.ts';
import type { GenerationDetail } from '../../../services/generations/views.ts';
import { builder } from '../builder.ts';
import { readOnce, takeTurn } from '../fan-out.ts';
import { liveSubscription, principalOf, servicesFor } from '../request-context.ts';
import { GenerationRef } from './generation.ts';

const services = servicesFor('generationReader');

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
              await takeTurn(next.value);
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
            for await (const e of events) {
              const g = await readOnce(e, p.teamId, () => services(ctx).generationReader.get(p, e.id));
              await takeTurn(e);
              yield g;
            }
          } finally {
            await events.return();
          }
        })()),
      resolve: (g: GenerationDetail) => g,
    }),
  }),
});
