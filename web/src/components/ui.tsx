import { useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiError } from '../api/client.ts';

/** An error in words: the server's message, never its JSON. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof ApiError || error instanceof Error ? error.message : 'Something went wrong: try again';
  const wait = error instanceof ApiError && error.retryAfter ? ` (you can try again in ${error.retryAfter} s)` : '';
  return (
    <p className="error" role="alert">
      {message}
      {wait}
    </p>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="secondary"
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => {});
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A secret shown once, with its copy button. */
export function Secret({ label, value }: { label: string; value: string }) {
  return (
    <div className="secret">
      <span className="secret-label">{label}</span>
      <code data-testid={label}>{value}</code>
      <CopyButton text={value} />
    </div>
  );
}

/** A modal question (the native <dialog>: focus trapped, Escape cancels). */
export function Confirm({ open, title, children, confirmLabel, danger, onConfirm, onCancel }: { open: boolean; title: string; children?: ReactNode; confirmLabel: string; danger?: boolean; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} onCancel={onCancel} aria-labelledby="confirm-title">
      <h3 id="confirm-title">{title}</h3>
      {children}
      <div className="row end">
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className={danger ? 'danger' : ''} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

export function Spinner() {
  return <span className="spinner" aria-label="loading" />;
}
