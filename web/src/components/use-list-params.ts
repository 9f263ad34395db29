import { useSearchParams } from 'react-router';

/**
 * A list page's filters and page offset, kept in the address so a reload or a shared link shows the
 * same list. Changing a filter goes back to the first page.
 */
export function useListParams() {
  const [params, setParams] = useSearchParams();
  const next = (change: (p: URLSearchParams) => void) => {
    const p = new URLSearchParams(params);
    change(p);
    setParams(p);
  };
  return {
    filter: (key: string): string => params.get(key) ?? '',
    offset: Number(params.get('offset') ?? 0) || 0,
    setFilter: (key: string, value: string) =>
      next((p) => {
        if (value) p.set(key, value);
        else p.delete(key);
        p.delete('offset');
      }),
    setOffset: (offset: number) =>
      next((p) => {
        if (offset > 0) p.set('offset', String(offset));
        else p.delete('offset');
      }),
  };
}
