import { useEffect, useId, type ReactNode } from 'react';
import { errorMessage } from '../api/client';

/**
 * The browser's title for the page shown: what the tab, the history (Back's list) and a screen
 * reader announce on arrival say, rather than the same "AnswerDesk" on every page.
 */
export function useDocumentTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · AnswerDesk`;
  }, [title]);
}

/** The heading of a page: its title (the page's one <h1>, and the browser's title), a line of explanation and its main actions. */
export function PageHeader({ title, description, children }: { title: string; description?: ReactNode; children?: ReactNode }) {
  useDocumentTitle(title);
  return (
    <header className="page-header">
      <div>
        {/* Focusable from script only: where the focus goes when what had it is gone. */}
        <h1 tabIndex={-1}>{title}</h1>
        {description ? <p>{description}</p> : null}
      </div>
      {children ? <div className="row">{children}</div> : null}
    </header>
  );
}

/** Moves the focus to the page's title (its <h1>), or to the content itself while the page loads. */
export function focusPageTitle(): void {
  (document.querySelector<HTMLElement>('#main h1') ?? document.getElementById('main'))?.focus();
}

/** A count with its noun: "1 case", "3 cases". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** What a form control needs to be labelled and tied to its hint and error. */
export interface ControlProps {
  id: string;
  'aria-invalid': boolean | undefined;
  'aria-describedby': string | undefined;
}

/** The ids of a control's hint and error, for aria-describedby (undefined when it has neither). */
function describedByOf(id: string, hint: ReactNode, error: string | undefined): string | undefined {
  return [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
}

/** A field's hint and error under its control, with the ids describedByOf names. */
function FieldNotes({ id, hint, error }: { id: string; hint?: ReactNode; error?: string }) {
  return (
    <>
      {hint ? (
        <span className="hint" id={`${id}-hint`}>
          {hint}
        </span>
      ) : null}
      {error ? (
        <span className="field-error" id={`${id}-error`}>
          {error}
        </span>
      ) : null}
    </>
  );
}

/**
 * A labelled form field whose error (from the API: `ApiError.fieldError(path)`) is shown right
 * under the control and announced with it.
 */
export function Field({ label, hint, error, children }: { label: ReactNode; hint?: ReactNode; error?: string; children: (props: ControlProps) => ReactNode }) {
  const id = useId();
  const describedBy = describedByOf(id, hint, error);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy })}
      <FieldNotes id={id} hint={hint} error={error} />
    </div>
  );
}

/** A checkbox with its label beside it, and like `Field` an optional hint and error under it. */
export function CheckboxField({
  label,
  hint,
  error,
  checked,
  onChange,
  disabled,
}: {
  label: ReactNode;
  hint?: ReactNode;
  error?: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  disabled?: boolean;
}) {
  const id = useId();
  const describedBy = describedByOf(id, hint, error);
  return (
    <div className="field">
      <label className="checkbox" htmlFor={id}>
        <input
          id={id}
          type="checkbox"
          checked={checked}
          onChange={(e) => onChange(e.target.checked)}
          disabled={disabled}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy}
        />
        {label}
      </label>
      <FieldNotes id={id} hint={hint} error={error} />
    </div>
  );
}

/** The error of a whole form or action, announced when it appears. */
export function FormError({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="form-error" role="alert">
      {errorMessage(error)}
    </p>
  );
}

export function Loading({ what = 'Loading…' }: { what?: string }) {
  return (
    <p role="status" className="muted">
      {what}
    </p>
  );
}

/** Shown when a page's data could not be read. */
/**
 * Where a list's data goes while it is not there yet: loading, the error that stopped it, or (with
 * `isEmpty`) the text saying there is nothing to show. Renders nothing once there is data.
 */
export function QueryStatus({ query, isEmpty = false, empty }: { query: { isPending: boolean; isError: boolean; error: unknown }; isEmpty?: boolean; empty?: ReactNode }) {
  if (query.isPending) return <Loading />;
  if (query.isError) return <QueryError error={query.error} />;
  return isEmpty && empty ? <p className="muted">{empty}</p> : null;
}

export function QueryError({ error }: { error: unknown }) {
  return (
    <p className="form-error" role="alert">
      Could not load: {errorMessage(error)}
    </p>
  );
}

/** A viewer's note next to disabled controls: the server refuses their changes too. */
export function ReadOnlyNote({ show }: { show: boolean }) {
  if (!show) return null;
  return <p className="notice">You have read-only access to this project: ask an admin to make changes.</p>;
}

/** A time the page cannot read is shown as given rather than failing the whole page. */
function formatted(format: Intl.DateTimeFormat, iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : format.format(at);
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return formatted(dateTime, iso);
}

const time = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });
export function formatTime(iso: string): string {
  return formatted(time, iso);
}
