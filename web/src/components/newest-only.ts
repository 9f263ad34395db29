import { useRef } from 'react';

/**
 * Keeps only the answer of the newest request: a list page asks again whenever its filters or
 * offset change, and a slower answer to an earlier question must never replace a newer one
 * (the filtered page would show the unfiltered lines).
 */
export function newestOnly() {
  let newest = 0;
  return <T>(answer: Promise<T>, use: (value: T) => void, fail: (error: unknown) => void): Promise<void> => {
    const mine = ++newest;
    return answer.then(
      (value) => (mine === newest ? use(value) : undefined),
      (error: unknown) => (mine === newest ? fail(error) : undefined),
    );
  };
}

/** newestOnly for one component, kept across renders. */
export function useNewestOnly(): ReturnType<typeof newestOnly> {
  const ref = useRef<ReturnType<typeof newestOnly> | null>(null);
  ref.current ??= newestOnly();
  return ref.current;
}
