import { useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiError } from '../../api/client';

/**
 * A destructive button that asks once more in place (no modal dialog): the first press shows
 * "Confirm" and "Cancel" next to each other, focus moves to Cancel so Enter does not delete by accident.
 */
export function ConfirmButton({
  label,
  confirmLabel,
  onConfirm,
  disabled,
  busy,
  name,
}: {
  label: string;
  confirmLabel: string;
  onConfirm: () => void;
  disabled?: boolean;
  busy?: boolean;
  /** The first button's accessible name, when its label alone does not say what it acts on. */
  name?: string;
}) {
  const [asking, setAsking] = useState(false);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) cancelRef.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button type="button" className="secondary" disabled={disabled || busy} onClick={() => setAsking(true)} aria-label={name}>
        {label}
      </button>
    );
  return (
    <span className="row" role="group" aria-label={confirmLabel}>
      <button
        type="button"
        className="danger"
        disabled={busy}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" className="secondary" ref={cancelRef} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** An error detail's path in dots (`items.2.answer`), whether the API wrote it so or as a pointer (`/items/2/answer`). */
export function detailPath(path: string): string {
  return path.replace(/^\//, '').replaceAll('/', '.');
}

/**
 * The API's messages for one field and everything under it (`parameters` also collects
 * `parameters.properties.x.type`), each with the rest of its path, joined for display.
 */
export function errorsUnder(err: unknown, field: string): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const found = err.details.filter((d) => {
    const p = detailPath(d.path);
    return p === field || p.startsWith(`${field}.`) || p.startsWith(`${field}[`);
  });
  if (!found.length) return undefined;
  return found.map((d) => (detailPath(d.path) === field ? d.message : `${detailPath(d.path).slice(field.length + 1)}: ${d.message}`)).join('; ');
}

/** The API's error for a whole form, unless every detail is already shown next to one of `fields`. */
export function formLevelError(err: unknown, fields: string[]): unknown {
  if (!(err instanceof ApiError)) return err;
  if (err.message !== 'Validation error' || err.details.length === 0) return err;
  const shown = err.details.every((d) => fields.some((f) => errorsUnder(new ApiError(400, '', [d]), f)));
  return shown ? new ApiError(err.status, 'Please correct the fields marked below.') : err;
}

export type JsonCheck<T> = { ok: true; value: T } | { ok: false; error: string };

/** Parses JSON text and says where it breaks (line and column), for the editors' live validation. */
export function parseJson<T = unknown>(text: string): JsonCheck<T> {
  try {
    return { ok: true, value: JSON.parse(text) as T };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /position (\d+)/.exec(message);
    if (at) {
      const pos = Number(at[1]);
      const before = text.slice(0, pos).split('\n');
      return { ok: false, error: `Invalid JSON at line ${before.length}, column ${before[before.length - 1].length + 1}: ${message.replace(/ in JSON at position \d+.*$/, '').replace(/\s*\(line \d+ column \d+\)$/, '')}` };
    }
    return { ok: false, error: `Invalid JSON: ${message}` };
  }
}

/** A status word as a coloured badge. */
export function StatusBadge({ tone, children }: { tone: 'ok' | 'bad' | 'neutral'; children: ReactNode }) {
  return <span className={`badge${tone === 'neutral' ? '' : ` ${tone}`}`}>{children}</span>;
}

/** JSON shown readably: pretty-printed when the text parses, as is otherwise. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? String(value);
}

/**
 * An on/off switch for a stored flag. It moves in the same event (a checkbox bound straight to the
 * query cache would snap back until the server answered) and follows the stored value again once
 * that is read back; a refused change (onToggle's promise rejects) puts it back at once.
 */
export function EnableSwitch({ label, checked, disabled, onToggle }: { label: string; checked: boolean; disabled: boolean; onToggle: (next: boolean) => Promise<unknown> }) {
  const [shown, setShown] = useState(checked);
  useEffect(() => setShown(checked), [checked]);
  return (
    <label className="checkbox">
      <input
        type="checkbox"
        checked={shown}
        disabled={disabled}
        onChange={(e) => {
          const next = e.target.checked;
          setShown(next);
          onToggle(next).catch(() => setShown(!next));
        }}
      />
      <span className="sr-only">{label}</span>
      <StatusBadge tone={shown ? 'ok' : 'neutral'}>{shown ? 'enabled' : 'disabled'}</StatusBadge>
    </label>
  );
}
