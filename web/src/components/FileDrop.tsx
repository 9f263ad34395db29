import { useEffect, useId, useRef, useState, type DragEvent } from 'react';
import { uploadFile } from '../api/client.ts';
import { ErrorNote } from './ui.tsx';
import './file-drop.css';

export type UploadKind = 'image' | 'video' | 'audio';

/** What the picker offers first; the server reads the bytes and decides (a wrong kind comes back in its words). */
const ACCEPT: Record<UploadKind, string> = {
  image: 'image/png,image/jpeg,image/webp,image/gif,image/avif',
  video: 'video/mp4,video/quicktime,video/webm,video/x-matroska,.mkv',
  audio: 'audio/*,video/mp4,video/quicktime,video/webm',
};

interface Sent {
  name: string;
  size: number;
  ref: string;
  preview?: string | undefined;
}

/** "Image URL" -> "Image file", "Reference image URLs (up to 3)" -> "Reference image files": the picker's own label. */
export const fileLabelOf = (urlLabel: string): string =>
  urlLabel
    .replace(/\s*\(.*\)\s*$/, '')
    .replace(/\bURLs\b/, 'files')
    .replace(/\bURL\b/, 'file');

export function sizeInWords(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A file for a URL field, dropped or picked: sent as the signed-in person, and the field gets its
 * `upload:<id>` reference (appended, one per line, where the field takes several). Shows the file's
 * name and size, a preview of an image, and the server's refusal in words.
 */
export function FileDrop({ label, kind, multiple = false, value, onUploaded }: { label: string; kind: UploadKind; multiple?: boolean; value: string; onUploaded: (ref: string) => void }) {
  const id = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [over, setOver] = useState(false);
  const [sent, setSent] = useState<Sent[]>([]);
  const previews = useRef<string[]>([]);
  useEffect(() => () => previews.current.forEach((u) => URL.revokeObjectURL(u)), []);

  async function take(files: File[]) {
    if (files.length === 0) return;
    setError(null);
    setBusy(true);
    try {
      for (const file of multiple ? files : files.slice(0, 1)) {
        const upload = await uploadFile(file);
        const preview = upload.content_type.startsWith('image/') ? URL.createObjectURL(file) : undefined;
        if (preview) previews.current.push(preview);
        setSent((s) => [...(multiple ? s : []), { name: file.name, size: upload.size, ref: upload.url, preview }]);
        onUploaded(upload.url);
      }
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  function drop(e: DragEvent) {
    e.preventDefault();
    setOver(false);
    void take([...e.dataTransfer.files]);
  }
  // What the field still names: a file whose reference was cleared from it is no longer shown.
  const shown = sent.filter((s) => value.includes(s.ref));
  return (
    <div
      className={`file-drop${over ? ' over' : ''}`}
      data-testid="file-drop"
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={drop}
    >
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="file"
        accept={ACCEPT[kind]}
        multiple={multiple}
        disabled={busy}
        aria-describedby={`${id}-how`}
        onChange={(e) => {
          const files = [...(e.target.files ?? [])];
          e.target.value = '';
          void take(files);
        }}
      />
      <span id={`${id}-how`} className="hint">
        {busy ? 'Uploading…' : `or drop ${multiple ? 'files' : 'a file'} here`}
      </span>
      {shown.map((s) => (
        <div key={s.ref} className="file-chosen" data-testid="file-chosen">
          {s.preview && <img src={s.preview} alt={`Preview of ${s.name}`} />}
          <span>
            {s.name} · {sizeInWords(s.size)}
          </span>
        </div>
      ))}
      <ErrorNote error={error} />
    </div>
  );
}

/** A field that takes several URLs, one per line: the new reference on a line of its own. */
export const appendLine = (text: string | undefined, line: string): string => (text && text.trim() ? `${text.replace(/\s+$/, '')}\n${line}` : line);
