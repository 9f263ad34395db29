/** Newer / Older over a list paged like the API (`limit`, `offset`, newest first). */
export function Pager({ offset, shown, total, pageSize, onOffset }: { offset: number; shown: number; total: number; pageSize: number; onOffset: (offset: number) => void }) {
  return (
    <div className="row pager">
      <button type="button" className="secondary" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - pageSize))}>
        Newer
      </button>
      <span>
        {offset + 1}–{offset + shown} of {total}
      </span>
      <button type="button" className="secondary" disabled={offset + pageSize >= total} onClick={() => onOffset(offset + pageSize)}>
        Older
      </button>
    </div>
  );
}
