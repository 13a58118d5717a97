import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState, type ChangeEvent, type FormEvent } from 'react';
import { ApiError, api, unwrap, type ErrorDetail } from '../../api/client';
import type { components } from '../../api/schema';
import { detailPath, errorsUnder, formLevelError } from '../kit/kit';
import { CheckboxField, Field, FormError, plural } from '../ui';
import { blankCase, importCases, isBlank, LIMITS, MAX_FILE_BYTES, toCase, type CaseDraft, type EvalCase } from './cases';

type EvalSuite = components['schemas']['EvalSuite'];

/** The API's messages at exactly `path` (not those of what is under it). */
function errorsAt(err: unknown, path: string): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const found = err.details.filter((d) => detailPath(d.path) === path);
  return found.length ? found.map((d) => d.message).join('; ') : undefined;
}

/** The API's messages for a list field: for the list itself, or for one of its items, named by its text. */
function listErrors(err: unknown, path: string, sent: string[] | undefined): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const found = err.details.filter((d: ErrorDetail) => detailPath(d.path) === path || detailPath(d.path).startsWith(`${path}.`));
  if (!found.length) return undefined;
  return found
    .map((d) => {
      const rest = detailPath(d.path).slice(path.length + 1);
      const item = /^\d+$/.test(rest) ? sent?.[Number(rest)] : undefined;
      return rest === '' ? d.message : item !== undefined ? `“${item.length > 60 ? `${item.slice(0, 60)}…` : item}”: ${d.message}` : `${rest}: ${d.message}`;
    })
    .join('; ');
}

/**
 * Creates a suite: a name and its cases, typed one by one (added, removed) or imported from a JSON
 * case file in the CLI's format (chosen with the file dialog, or pasted). Blank cases are left out
 * when sending; what the server refuses is shown on the case and field it names, as that case is
 * numbered in the form, with everything typed kept.
 */
export function SuiteEditor({ projectId, onCreated, onClose }: { projectId: string; onCreated: (suite: EvalSuite) => void; onClose: () => void }) {
  const [name, setName] = useState('');
  const [cases, setCases] = useState<CaseDraft[]>(() => [blankCase()]);
  // The keys of the cases sent, in the order sent: case i of the server's errors is the form's case with sentKeys[i].
  const [sentKeys, setSentKeys] = useState<number[]>([]);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);
  // The case just added takes the focus on its question; one removed hands it to the next case (or "Add a case").
  const [focusCase, setFocusCase] = useState<number | 'add' | null>(null);
  const addRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (focusCase === null) return;
    if (focusCase === 'add') addRef.current?.focus();
    else document.querySelector<HTMLElement>(`[data-case-question="${focusCase}"]`)?.focus();
    setFocusCase(null);
  }, [focusCase]);

  const create = useMutation({
    mutationFn: async (body: { name: string; cases: EvalCase[] }) =>
      unwrap(await api.POST('/api/v1/admin/projects/{projectId}/evals', { params: { path: { projectId } }, body })).eval,
    onSuccess: onCreated,
  });
  const err = create.error;
  const sent = create.variables?.cases;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const toSend = cases.filter((c) => !isBlank(c));
    setSentKeys(toSend.map((c) => c.key));
    create.mutate({ name, cases: toSend.map(toCase) });
  };
  const update = (key: number, patch: Partial<CaseDraft>) => setCases((all) => all.map((c) => (c.key === key ? { ...c, ...patch } : c)));
  const remove = (key: number) => {
    const at = cases.findIndex((c) => c.key === key);
    const rest = cases.filter((c) => c.key !== key);
    setCases(rest);
    setFocusCase(rest[at]?.key ?? 'add');
  };
  const add = () => {
    const c = blankCase();
    setCases((all) => [...all, c]);
    setFocusCase(c.key);
  };
  const addImported = (imported: CaseDraft[]) => setCases((all) => [...all.filter((c) => !isBlank(c)), ...imported]);

  const wholeList = errorsAt(err, 'cases');
  return (
    <section className="card" aria-labelledby="suite-editor-heading">
      <h2 id="suite-editor-heading" tabIndex={-1} ref={headingRef}>
        New suite
      </h2>
      <form className="stack" onSubmit={submit} noValidate>
        <Field label="Name" hint="What these questions check, e.g. “Returns and refunds”." error={errorsUnder(err, 'name')}>
          {(p) => <input {...p} type="text" maxLength={LIMITS.nameChars} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <ImportCases onImport={addImported} />
        <fieldset className="eval-cases" aria-describedby={wholeList ? 'eval-cases-error' : undefined}>
          <legend>
            Cases ({cases.length} of at most {LIMITS.cases})
          </legend>
          <p className="hint muted">
            A case is a question as a customer would ask it. For one your help content answers, name the sources that answer it and the key terms the right answer
            holds: it passes when an expected source is cited and every term is in the answer. Untick <em>The help content answers it</em> for one the agent should
            decline. Blank cases are left out.
          </p>
          <ol className="eval-case-list">
            {cases.map((c, i) => {
              const s = sentKeys.indexOf(c.key);
              // The server's errors name the case by its place among those sent.
              const at = s >= 0 && sent?.[s] ? `cases.${s}` : null;
              return (
                <li key={c.key} className="eval-case" data-case={i + 1}>
                  <CaseFields
                    draft={c}
                    number={i + 1}
                    errors={
                      at
                        ? {
                            case: errorsAt(err, at),
                            question: errorsUnder(err, `${at}.question`),
                            answerable: errorsUnder(err, `${at}.answerable`),
                            sources: listErrors(err, `${at}.expectedSources`, sent?.[s]?.expectedSources),
                            terms: listErrors(err, `${at}.mustContain`, sent?.[s]?.mustContain),
                          }
                        : {}
                    }
                    onChange={(patch) => update(c.key, patch)}
                    onRemove={cases.length > 1 ? () => remove(c.key) : undefined}
                  />
                </li>
              );
            })}
          </ol>
          {wholeList ? (
            <p className="field-error" id="eval-cases-error">
              {wholeList}
            </p>
          ) : null}
          <button type="button" className="secondary" ref={addRef} onClick={add} disabled={cases.length >= LIMITS.cases}>
            Add a case
          </button>
        </fieldset>
        <FormError error={err ? formLevelError(err, ['name', 'cases']) : null} />
        <div className="row">
          <button type="submit" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create suite'}
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

function CaseFields({
  draft,
  number,
  errors,
  onChange,
  onRemove,
}: {
  draft: CaseDraft;
  number: number;
  errors: { case?: string; question?: string; answerable?: string; sources?: string; terms?: string };
  onChange: (patch: Partial<CaseDraft>) => void;
  onRemove?: () => void;
}) {
  return (
    <fieldset className="eval-case-fields">
      <legend>Case {number}</legend>
      {errors.case ? <p className="field-error">{errors.case}</p> : null}
      <Field label={`Question ${number}`} error={errors.question}>
        {(p) => (
          <input {...p} data-case-question={draft.key} type="text" maxLength={LIMITS.questionChars} value={draft.question} onChange={(e) => onChange({ question: e.target.value })} />
        )}
      </Field>
      <CheckboxField label="The help content answers it" error={errors.answerable} checked={draft.answerable} onChange={(answerable) => onChange({ answerable })} />
      <div className="grid-2">
        <Field
          label={`Expected sources ${number}`}
          hint={draft.answerable ? 'One a line: a source’s title, URL or id (ks_…); citing any one counts.' : 'None for a question the help content does not answer.'}
          error={errors.sources}
        >
          {(p) => <textarea {...p} rows={3} value={draft.sources} onChange={(e) => onChange({ sources: e.target.value })} />}
        </Field>
        <Field
          label={`Key terms ${number}`}
          hint={draft.answerable ? 'One a line: words the right answer holds (case and spacing do not matter).' : 'None for a question the help content does not answer.'}
          error={errors.terms}
        >
          {(p) => <textarea {...p} rows={3} value={draft.terms} onChange={(e) => onChange({ terms: e.target.value })} />}
        </Field>
      </div>
      {onRemove ? (
        <div>
          <button type="button" className="link" onClick={onRemove}>
            Remove case {number}
          </button>
        </div>
      ) : null}
    </fieldset>
  );
}

/** Adds the cases of a JSON case file (the CLI's format), chosen with the file dialog or pasted. */
function ImportCases({ onImport }: { onImport: (cases: CaseDraft[]) => void }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const apply = (json: string, from: string) => {
    const result = importCases(json);
    if (!result.ok) {
      setDone(null);
      setError(`${from}: ${result.error}`);
      return false;
    }
    setError(null);
    setDone(`Added ${plural(result.cases.length, 'case')} from ${from}.`);
    onImport(result.cases);
    return true;
  };
  const pick = async (event: ChangeEvent<HTMLInputElement>) => {
    const input = event.currentTarget;
    const file = input.files?.[0];
    if (!file) return;
    if (file.size > MAX_FILE_BYTES) {
      setDone(null);
      setError(`${file.name}: the file is larger than 16 MiB.`);
    } else {
      apply(await file.text(), file.name);
    }
    // The same file can be chosen again (after fixing it).
    input.value = '';
  };
  return (
    <details className="eval-import">
      <summary>Import cases from JSON</summary>
      <div className="stack">
        <p className="hint muted">
          The format <code>answerdesk eval run --file</code> takes: an array of cases, or <code>{'{"cases": […]}'}</code>, each{' '}
          <code>{'{"question", "answerable", "expectedSources", "mustContain"}'}</code>; other fields are ignored. The cases are added after those in the form.
        </p>
        <Field label="JSON file of cases">{(p) => <input {...p} type="file" accept=".json,application/json" onChange={(e) => void pick(e)} />}</Field>
        <Field label="Or paste the JSON">{(p) => <textarea {...p} rows={5} className="mono" value={text} onChange={(e) => setText(e.target.value)} />}</Field>
        <div>
          <button type="button" className="secondary" disabled={!text.trim()} onClick={() => apply(text, 'The pasted JSON') && setText('')}>
            Add the pasted cases
          </button>
        </div>
        {error ? (
          <p className="form-error" role="alert">
            {error}
          </p>
        ) : null}
        {done ? (
          <p className="success" role="status">
            {done}
          </p>
        ) : null}
      </div>
    </details>
  );
}
