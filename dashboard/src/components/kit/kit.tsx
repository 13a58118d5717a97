import { useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiError } from '../../api/client';
import { focusPageTitle } from '../ui';

/**
 * Where the focus goes when a control goes away with what it acted on (a deleted row, a revoked key,
 * a closed conversation): the same action in the next row, or in the row before for the last one,
 * else the heading of the list's section, else the page's title. `from` is the control, read when it
 * is pressed; the returned function moves the focus, and only when it was lost (it is on the page's
 * body), never away from something the user went on to meanwhile. A next row's action still
 * disabled while the list is busy gets the focus once it is enabled again; the heading holds it until then.
 */
function landingAfter(from: Element, action: string): () => void {
  const row = from.closest('tr, li');
  const siblings = (step: 'nextElementSibling' | 'previousElementSibling') => {
    const out: Element[] = [];
    for (let r = row?.[step]; r; r = r[step]) out.push(r);
    return out;
  };
  const rows = [...siblings('nextElementSibling'), ...siblings('previousElementSibling')];
  const section = from.closest('section[aria-labelledby]');
  const heading = section ? document.getElementById(section.getAttribute('aria-labelledby') ?? '') : null;
  const lost = () => {
    const active = document.activeElement;
    return !active || active === document.body || !active.isConnected;
  };
  return () => {
    if (!lost()) return;
    const next = rows
      .filter((r) => r.isConnected)
      .map((r) => Array.from(r.querySelectorAll<HTMLButtonElement>('button[data-row-action]')).find((b) => b.dataset.rowAction === action))
      .find((b) => b !== undefined);
    if (next && !next.disabled) return next.focus();
    if (heading?.isConnected) {
      if (!heading.hasAttribute('tabindex')) heading.tabIndex = -1;
      heading.focus();
    } else focusPageTitle();
    if (!next) return;
    const parked = document.activeElement;
    const until = Date.now() + 10_000;
    const wait = () => {
      if (document.activeElement !== parked || !next.isConnected || Date.now() > until) return;
      if (next.disabled) requestAnimationFrame(wait);
      else next.focus();
    };
    requestAnimationFrame(wait);
  };
}

/**
 * For a control whose success removes it (Delete, Revoke, Dismiss): call `arm(element)` when it is
 * pressed; if the control then goes away, the focus moves on as landingAfter says, rather than
 * dropping to the top of the page. Mark the same action in every row with `data-row-action={action}`.
 */
export function useFocusAfterRemoval(action: string): (from: Element | null) => void {
  const land = useRef<(() => void) | null>(null);
  // Runs once the commit that removed the control is on screen, with the rows left in place.
  useEffect(
    () => () => {
      land.current?.();
      land.current = null;
    },
    [],
  );
  return (from) => {
    land.current = from ? landingAfter(from, action) : null;
  };
}

/**
 * A destructive button that asks once more in place (no modal dialog): the first press shows
 * "Confirm" and "Cancel" next to each other, focus moves to Cancel so Enter does not delete by accident.
 * Cancel puts the focus back on the first button, so a keyboard user stays where they were. Once
 * confirmed, the focus moves on when the button goes away with what it removed (useFocusAfterRemoval),
 * or comes back to the first button when it stays (the server refused).
 */
export function ConfirmButton({
  label,
  confirmLabel,
  onConfirm,
  disabled,
  busy,
  name,
  action = label,
}: {
  label: string;
  confirmLabel: string;
  onConfirm: () => void;
  disabled?: boolean;
  busy?: boolean;
  /** The first button's accessible name, when its label alone does not say what it acts on. */
  name?: string;
  /** What the button does in every row of its list alike (its label, unless that names the row). */
  action?: string;
}) {
  const [asking, setAsking] = useState(false);
  // Cancel (rather than the first render) brings the focus back to the first button.
  const [cancelled, setCancelled] = useState(false);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const askRef = useRef<HTMLButtonElement>(null);
  const arm = useFocusAfterRemoval(action);
  // Confirmed, and the request seen busy: when it is over with this button still here, the focus comes back to it.
  const [confirmed, setConfirmed] = useState<'sent' | 'busy' | null>(null);
  useEffect(() => {
    if (asking) cancelRef.current?.focus();
    else if (cancelled) askRef.current?.focus();
  }, [asking, cancelled]);
  useEffect(() => {
    if (confirmed === 'sent' && busy) setConfirmed('busy');
    if (confirmed === 'busy' && !busy) {
      setConfirmed(null);
      const active = document.activeElement;
      if (!active || active === document.body || !active.isConnected) askRef.current?.focus();
    }
  }, [confirmed, busy]);
  if (!asking)
    return (
      <button
        type="button"
        className="secondary"
        ref={askRef}
        data-row-action={action}
        disabled={disabled || busy}
        onClick={() => {
          setCancelled(false);
          setAsking(true);
        }}
        aria-label={name}
      >
        {label}
      </button>
    );
  return (
    <span className="row" role="group" aria-label={confirmLabel}>
      <button
        type="button"
        className="danger"
        disabled={busy}
        onClick={(e) => {
          arm(e.currentTarget);
          setAsking(false);
          setConfirmed('sent');
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button
        type="button"
        className="secondary"
        ref={cancelRef}
        onClick={() => {
          setCancelled(true);
          setAsking(false);
        }}
      >
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
  return shown ? new ApiError(err.status, 'Please correct the marked fields.') : err;
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
