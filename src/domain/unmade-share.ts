import { isImageOperation } from './generation-types.ts';

/**
 * What a generation that made only some of its outputs gives back: the credits of those it did
 * not make, when its price is a price per output times their number (images: per image times
 * `quantity`, pricing.ts), exactly that share; undefined when its price is anything else (nothing
 * partial can be sold, so it fails and refunds whole). `made` counts the outputs kept, at least one.
 */
export function unmadeShare(g: { operation: string; params: Record<string, unknown>; credits: number }, made: number): number | undefined {
  if (!isImageOperation(g.operation)) return undefined;
  const quantity = Number(g.params.quantity ?? 1);
  if (!Number.isInteger(quantity) || quantity < 1 || !Number.isInteger(made) || made < 1 || made > quantity) return undefined;
  // The price charged at create, per output: the stored charge, not today's table.
  if (g.credits % quantity !== 0) return undefined;
  return (g.credits / quantity) * (quantity - made);
}
