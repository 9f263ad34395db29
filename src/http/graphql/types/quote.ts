import { quoteRateCost, type Quote, type Quotable } from '../../../services/quotes.ts';
import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';
import { errorTypes } from './errors.ts';

const services = servicesFor('quotes');

export const QuoteRef = builder.objectRef<Quote>('Quote').implement({
  description: 'What a create would charge now, before paying; nothing stored or charged',
  fields: (t) => ({
    credits: t.exposeInt('credits'),
    credits_remaining: t.exposeInt('credits_remaining'),
    affordable: t.exposeBoolean('affordable', { description: 'credits <= credits_remaining' }),
  }),
});

/** A `quote<Name>(input)` query beside the mutation that creates with the same input. */
export function quoteField(name: string, what: Quotable, input: unknown, prepare: (input: unknown) => unknown = (i) => i): void {
  builder.queryField(name, (t) =>
    t.field({
      type: QuoteRef,
      errors: errorTypes,
      // What it takes from the key's bucket (rate-limit-plugin.ts): a quote that downloads media is a write.
      extensions: { rateCost: quoteRateCost(what) },
      args: { input: t.arg({ type: input as never, required: true }) },
      resolve: (_r, args, ctx) => services(ctx).quotes.quote(principalOf(ctx), what, prepare(args.input)),
    }),
  );
}
