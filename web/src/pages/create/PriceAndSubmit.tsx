import { ErrorNote } from '../../components/ui.tsx';
import type { useCreate } from './use-create.ts';

/** The price before paying, the rule a field breaks (the API's own words), and the one submit button. */
export function PriceAndSubmit({ create, label }: { create: ReturnType<typeof useCreate>; label: string }) {
  const { problem, price, quoteError, submitting, error } = create;
  return (
    <div className="submit-row">
      <p className="price" aria-live="polite">
        {problem ? (
          <span className="problem">{problem}</span>
        ) : price ? (
          <>
            Costs <strong data-testid="price">{price.credits}</strong> credits · {price.credits_remaining} left
            {!price.affordable && <span className="problem"> · not enough credits</span>}
          </>
        ) : (
          '…'
        )}
      </p>
      <ErrorNote error={quoteError} />
      <ErrorNote error={error} />
      <button type="submit" disabled={submitting || !!problem || (price !== null && !price.affordable)}>
        {submitting ? 'Creating…' : label}
      </button>
    </div>
  );
}
