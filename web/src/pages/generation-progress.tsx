import type { Generation } from './generation-types.ts';

/**
 * A processing generation's progress bar and its stage in words, as its engine reports them
 * (GraphQL `progress` and `stage`, updated live by the subscriptions). Without a fraction the bar
 * is indeterminate and only the stage is shown.
 */
export function GenerationProgress({ g }: { g: Pick<Generation, 'status' | 'progress' | 'stage'> }) {
  if (g.status !== 'processing') return null;
  const fraction = typeof g.progress === 'number' ? g.progress : null;
  const percent = fraction === null ? null : Math.round(fraction * 100);
  const words = g.stage ?? 'waiting to start';
  return (
    <div className="progress" data-testid="generation-progress" data-progress={fraction ?? ''}>
      <progress max={1} {...(fraction === null ? {} : { value: fraction })} aria-label={`Progress: ${words}`} />
      <span className="hint" data-testid="generation-stage">
        {words}
        {percent === null ? '' : ` · ${percent}%`}
      </span>
    </div>
  );
}
