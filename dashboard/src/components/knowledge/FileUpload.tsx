import { useId, useRef, useState, type DragEvent } from 'react';
import { toApiError, errorMessage } from '../../api/client';

/** What the server reads (src/api/knowledge): anything else is refused there with a clear message too. */
const ACCEPT = '.md,.markdown,.txt,.html,.htm,.pdf';
const MAX_BYTES = 20 * 1024 * 1024;

type Status = { state: 'queued' } | { state: 'uploading' } | { state: 'done'; title: string } | { state: 'failed'; error: string };
interface Item {
  key: string;
  file: File;
  status: Status;
}

/**
 * Uploads documents: dropped on the zone or picked with the file dialog, several at once. The
 * endpoint takes one file per request, so they go one after the other, each with its own result; a
 * refused file stays in the list with the server's reason, the others are not held up.
 */
export function FileUpload({ projectId, disabled, onUploaded }: { projectId: string; disabled: boolean; onUploaded: () => void }) {
  const [items, setItems] = useState<Item[]>([]);
  const [dragging, setDragging] = useState(false);
  const [busy, setBusy] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const hintId = useId();
  const inputId = useId();

  const add = (files: FileList | File[]) => {
    const next = [...files].map((file, i) => ({
      key: `${file.name}-${file.size}-${file.lastModified}-${Date.now()}-${i}`,
      file,
      status: (file.size > MAX_BYTES ? { state: 'failed', error: 'File too large (at most 20 MiB)' } : { state: 'queued' }) as Status,
    }));
    setItems((prev) => [...prev.filter((p) => p.status.state !== 'done'), ...next]);
  };

  const setStatus = (key: string, status: Status) => setItems((prev) => prev.map((p) => (p.key === key ? { ...p, status } : p)));

  const uploadAll = async () => {
    setBusy(true);
    try {
      for (const item of items) {
        if (item.status.state !== 'queued' && item.status.state !== 'failed') continue;
        if (item.file.size > MAX_BYTES) continue;
        setStatus(item.key, { state: 'uploading' });
        const form = new FormData();
        form.append('file', item.file, item.file.name);
        try {
          const res = await fetch(`/api/v1/admin/projects/${encodeURIComponent(projectId)}/knowledge/files`, {
            method: 'POST',
            body: form,
            credentials: 'same-origin',
          });
          const body: unknown = await res.json().catch(() => null);
          if (!res.ok) throw toApiError(res.status, body);
          const source = (body as { source: { title: string | null; id: string } }).source;
          setStatus(item.key, { state: 'done', title: source.title ?? item.file.name });
          onUploaded();
        } catch (err) {
          setStatus(item.key, { state: 'failed', error: errorMessage(err) });
        }
      }
    } finally {
      setBusy(false);
    }
  };

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    if (disabled) return;
    if (event.dataTransfer.files.length) add(event.dataTransfer.files);
  };

  const pending = items.filter((i) => i.status.state === 'queued' || i.status.state === 'failed').length;

  return (
    <div className="stack">
      <div
        className={`drop-zone${dragging ? ' dragging' : ''}${disabled ? ' disabled' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          if (!disabled) setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
        data-testid="drop-zone"
      >
        <p>
          <strong>Drop files here</strong> or{' '}
          <label htmlFor={inputId} className="file-pick">
            choose files
          </label>
        </p>
        <input
          id={inputId}
          ref={inputRef}
          className="sr-only-input"
          type="file"
          multiple
          accept={ACCEPT}
          aria-describedby={hintId}
          disabled={disabled}
          onChange={(e) => {
            if (e.target.files?.length) add(e.target.files);
            e.target.value = '';
          }}
        />
        <p className="hint muted" id={hintId}>
          Markdown, text, HTML or PDF, up to 20 MiB each; each file becomes one source.
        </p>
      </div>
      {items.length ? (
        <ul className="file-list" aria-label="Files to upload">
          {items.map((item) => (
            <li key={item.key} data-state={item.status.state}>
              <span className="file-name">{item.file.name}</span> <span className="muted">{formatBytes(item.file.size)}</span>{' '}
              <FileStatus status={item.status} />
              {item.status.state !== 'uploading' ? (
                <button type="button" className="link" onClick={() => setItems((prev) => prev.filter((p) => p.key !== item.key))}>
                  Remove {item.file.name}
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      <div>
        <button type="button" disabled={disabled || busy || pending === 0} onClick={uploadAll}>
          {busy ? 'Uploading…' : pending > 1 ? `Upload ${pending} files` : 'Upload'}
        </button>
      </div>
    </div>
  );
}

function FileStatus({ status }: { status: Status }) {
  switch (status.state) {
    case 'queued':
      return <span className="badge">ready to upload</span>;
    case 'uploading':
      return (
        <span className="badge" role="status">
          uploading…
        </span>
      );
    case 'done':
      return (
        <span className="badge ok" role="status">
          uploaded
        </span>
      );
    case 'failed':
      return (
        <span className="field-error" role="alert">
          {status.error}
        </span>
      );
  }
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
