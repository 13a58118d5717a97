import { useMutation } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { errorsUnder, formLevelError, parseJson } from '../kit/kit';
import { Field, FormError } from '../ui';

type Action = components['schemas']['Action'];
type CreateBody = components['schemas']['CreateActionRequest'];

/** What the API shows instead of a stored secret value, and takes back as "keep it". */
export const SECRET_MASK = '********';
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** The server's rule (src/actions/definition.ts) for names whose values are secret unless marked otherwise. */
const SENSITIVE_NAME = /^(authorization|proxy-authorization|cookie)$|key|token|secret|passw|auth|session|signature|credential/i;

interface HeaderRow {
  key: number;
  name: string;
  value: string;
  /** undefined: follow the name (credential-looking names are secret). */
  secret: boolean | undefined;
  /** A secret already stored under this name: an empty value keeps it. */
  stored: boolean;
}

interface Draft {
  name: string;
  description: string;
  method: (typeof METHODS)[number];
  url: string;
  parameters: string;
  examples: string;
  query: string;
  body: string;
  timeoutMs: string;
  enabled: boolean;
  headers: HeaderRow[];
}

const DEFAULT_PARAMETERS = `{
  "type": "object",
  "properties": {},
  "required": []
}`;

let rowKey = 0;

function draftOf(action: Action | undefined): Draft {
  if (!action)
    return { name: '', description: '', method: 'GET', url: '', parameters: DEFAULT_PARAMETERS, examples: '', query: '', body: '', timeoutMs: '10000', enabled: true, headers: [] };
  return {
    name: action.name,
    description: action.description,
    method: action.method,
    url: action.url,
    parameters: JSON.stringify(action.parameters, null, 2),
    examples: action.examples.join('\n'),
    query: action.query?.join(', ') ?? '',
    body: action.body?.join(', ') ?? '',
    timeoutMs: String(action.timeoutMs),
    enabled: action.enabled,
    // Secret values never come back from the API (they read "********"): the field starts empty.
    headers: Object.entries(action.headers).map(([name, h]) => ({ key: ++rowKey, name, value: h.secret ? '' : h.value, secret: h.secret, stored: h.secret })),
  };
}

/** The live check of the parameters editor: JSON, an object, `type: "object"`. The server then compiles it with ajv. */
export function checkParameters(text: string): string | null {
  const parsed = parseJson(text);
  if (!parsed.ok) return parsed.error;
  const v = parsed.value;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'The parameters must be a JSON object (a JSON Schema).';
  if ((v as { type?: unknown }).type !== 'object') return 'The schema must have "type": "object" (the arguments are an object).';
  const props = (v as { properties?: unknown }).properties;
  if (props !== undefined && (typeof props !== 'object' || props === null || Array.isArray(props))) return '"properties" must be an object.';
  return null;
}

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * Creates or edits an action. The JSON Schema of the parameters is checked as it is typed; the
 * server's own checks (ajv strict mode, URL placeholders) come back next to the field they name.
 * Secret header values are write-only: never shown, kept unless a new value is typed.
 */
export function ActionEditor({
  projectId,
  action,
  canConfigure,
  flash,
  onEdit,
  onClose,
  onSaved,
}: {
  projectId: string;
  action: Action | undefined;
  canConfigure: boolean;
  flash: string | null;
  onEdit: () => void;
  onClose: () => void;
  onSaved: (action: Action, created: boolean) => void;
}) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(action));
  // The switch in the list may turn the action on or off while this form is open: until the form's
  // own box is ticked, the box shows the stored value and a save leaves it alone.
  const [enabledTouched, setEnabledTouched] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const paramsHint = useId();
  useEffect(() => headingRef.current?.focus(), []);
  const set = (patch: Partial<Draft>) => {
    onEdit();
    setDraft((d) => ({ ...d, ...patch }));
  };
  const setHeader = (key: number, patch: Partial<HeaderRow>) => set({ headers: draft.headers.map((h) => (h.key === key ? { ...h, ...patch } : h)) });

  const paramsError = checkParameters(draft.parameters);

  const save = useMutation({
    mutationFn: async () => {
      const headers: Record<string, { value: string; secret: boolean }> = {};
      for (const h of draft.headers) {
        if (!h.name.trim()) continue;
        const secret = h.secret ?? SENSITIVE_NAME.test(h.name);
        headers[h.name.trim()] = { value: secret && h.stored && h.value === '' ? SECRET_MASK : h.value, secret };
      }
      const body = {
        name: draft.name.trim(),
        description: draft.description,
        method: draft.method,
        url: draft.url.trim(),
        headers,
        parameters: JSON.parse(draft.parameters) as Record<string, unknown>,
        examples: draft.examples
          .split('\n')
          .map((s) => s.trim())
          .filter(Boolean),
        timeoutMs: Number(draft.timeoutMs),
      };
      const query = list(draft.query);
      const bodyArgs = list(draft.body);
      if (action) {
        // `enabled` is left alone unless this form's box was ticked: the list's switch may have changed it meanwhile.
        const patch = { ...body, ...(enabledTouched ? { enabled: draft.enabled } : {}), query: query.length ? query : null, body: bodyArgs.length ? bodyArgs : null };
        return { action: unwrap(await api.PATCH('/api/v1/admin/projects/{projectId}/actions/{actionId}', { params: { path: { projectId, actionId: action.id } }, body: patch })).action, created: false };
      }
      const create: CreateBody = { ...body, enabled: draft.enabled, ...(query.length ? { query } : {}), ...(bodyArgs.length ? { body: bodyArgs } : {}) };
      return { action: unwrap(await api.POST('/api/v1/admin/projects/{projectId}/actions', { params: { path: { projectId } }, body: create })).action, created: true };
    },
    onSuccess: ({ action: saved, created }) => onSaved(saved, created),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    onEdit();
    if (paramsError) return;
    save.mutate();
  };
  const err = save.error;
  const ro = !canConfigure;

  return (
    <section className="card" aria-labelledby="action-editor-heading">
      <h2 id="action-editor-heading" tabIndex={-1} ref={headingRef}>
        {action ? `Action “${action.name}”` : 'New action'}
      </h2>
      <form className="stack" onSubmit={submit} noValidate aria-label={action ? `Edit ${action.name}` : 'New action'}>
        <div className="grid-2">
          <Field label="Name" hint="The tool name the model calls: letters, digits, _ and -." error={errorsUnder(err, 'name')}>
            {(p) => <input {...p} type="text" maxLength={64} value={draft.name} onChange={(e) => set({ name: e.target.value })} disabled={ro} />}
          </Field>
          <Field label="Timeout (ms)" hint="100 to 30000." error={errorsUnder(err, 'timeoutMs')}>
            {(p) => <input {...p} type="number" min={100} max={30000} step={100} value={draft.timeoutMs} onChange={(e) => set({ timeoutMs: e.target.value })} disabled={ro} />}
          </Field>
        </div>
        <Field label="Description" hint="What the action does; the model reads it to decide when to call it." error={errorsUnder(err, 'description')}>
          {(p) => <textarea {...p} rows={2} maxLength={1024} value={draft.description} onChange={(e) => set({ description: e.target.value })} disabled={ro} />}
        </Field>
        <div className="method-url">
          <Field label="Method" error={errorsUnder(err, 'method')}>
            {(p) => (
              <select {...p} value={draft.method} onChange={(e) => set({ method: e.target.value as Draft['method'] })} disabled={ro}>
                {METHODS.map((m) => (
                  <option key={m}>{m}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="URL" hint="{name} placeholders in the path or query take arguments." error={errorsUnder(err, 'url')}>
            {(p) => <input {...p} type="url" placeholder="https://shop.example.com/api/orders/{orderNumber}" value={draft.url} onChange={(e) => set({ url: e.target.value })} disabled={ro} />}
          </Field>
        </div>

        <div className="field">
          <label htmlFor={`${paramsHint}-params`}>Parameters (JSON Schema)</label>
          <textarea
            id={`${paramsHint}-params`}
            className="mono"
            rows={12}
            spellCheck={false}
            value={draft.parameters}
            onChange={(e) => set({ parameters: e.target.value })}
            aria-invalid={paramsError || errorsUnder(err, 'parameters') ? true : undefined}
            aria-describedby={`${paramsHint}-hint ${paramsHint}-check`}
            disabled={ro}
          />
          <span className="hint" id={`${paramsHint}-hint`}>
            Draft-07 JSON Schema of the arguments, <code>"type": "object"</code>. Every URL placeholder must be a required property.
          </span>
          <span id={`${paramsHint}-check`} aria-live="polite" className={paramsError || errorsUnder(err, 'parameters') ? 'field-error' : 'success small'}>
            {paramsError ?? errorsUnder(err, 'parameters') ?? 'Valid JSON'}
          </span>
        </div>

        <div className="grid-2">
          <Field label="Query arguments (optional)" hint="Comma-separated argument names sent in the query string." error={errorsUnder(err, 'query')}>
            {(p) => <input {...p} type="text" value={draft.query} onChange={(e) => set({ query: e.target.value })} disabled={ro} />}
          </Field>
          <Field label="Body arguments (optional)" hint="Comma-separated argument names sent in the JSON body." error={errorsUnder(err, 'body')}>
            {(p) => <input {...p} type="text" value={draft.body} onChange={(e) => set({ body: e.target.value })} disabled={ro} />}
          </Field>
        </div>

        <fieldset className="headers">
          <legend>Headers</legend>
          <p className="hint muted">Secret values (credentials) are encrypted, never shown again and masked in tests and logs. Leave a stored secret empty to keep it.</p>
          {draft.headers.length === 0 ? <p className="muted small">No headers.</p> : null}
          {draft.headers.map((h, i) => {
            const secret = h.secret ?? SENSITIVE_NAME.test(h.name);
            const headerErr = h.name ? errorsUnder(err, `headers.${h.name.trim()}`) : undefined;
            return (
              <div key={h.key} className="header-row">
                <Field label={`Header ${i + 1} name`}>
                  {(p) => <input {...p} type="text" value={h.name} onChange={(e) => setHeader(h.key, { name: e.target.value, stored: false })} disabled={ro} autoComplete="off" />}
                </Field>
                <Field label={`Header ${i + 1} value`} error={headerErr}>
                  {(p) => (
                    <input
                      {...p}
                      type={secret ? 'password' : 'text'}
                      autoComplete="new-password"
                      placeholder={h.stored ? 'Stored secret: type to replace' : ''}
                      value={h.value}
                      onChange={(e) => setHeader(h.key, { value: e.target.value })}
                      disabled={ro}
                    />
                  )}
                </Field>
                <label className="checkbox">
                  <input type="checkbox" checked={secret} onChange={(e) => setHeader(h.key, { secret: e.target.checked, stored: h.stored && e.target.checked })} disabled={ro} />
                  Secret
                </label>
                <button type="button" className="link" onClick={() => set({ headers: draft.headers.filter((x) => x.key !== h.key) })} disabled={ro}>
                  Remove header {i + 1}
                </button>
              </div>
            );
          })}
          {errorsUnder(err, 'headers') && !draft.headers.some((h) => h.name && errorsUnder(err, `headers.${h.name.trim()}`)) ? (
            <p className="field-error">{errorsUnder(err, 'headers')}</p>
          ) : null}
          <button type="button" className="secondary" onClick={() => set({ headers: [...draft.headers, { key: ++rowKey, name: '', value: '', secret: undefined, stored: false }] })} disabled={ro}>
            Add a header
          </button>
        </fieldset>

        <Field label="Example requests (optional)" hint="One per line: phrases a user might say to trigger the action." error={errorsUnder(err, 'examples')}>
          {(p) => <textarea {...p} rows={3} value={draft.examples} onChange={(e) => set({ examples: e.target.value })} disabled={ro} />}
        </Field>
        <label className="checkbox">
          <input
            type="checkbox"
            checked={enabledTouched || !action ? draft.enabled : action.enabled}
            onChange={(e) => {
              setEnabledTouched(true);
              set({ enabled: e.target.checked });
            }}
            disabled={ro}
          />
          Enabled (offered to the agent)
        </label>
        <FormError error={err ? formLevelError(err, ['name', 'description', 'method', 'url', 'parameters', 'query', 'body', 'headers', 'examples', 'timeoutMs']) : null} />
        {flash ? (
          <p className="success" role="status">
            {flash}
          </p>
        ) : null}
        <div className="row">
          <button type="submit" disabled={ro || save.isPending || paramsError !== null}>
            {action ? 'Save action' : 'Create action'}
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Close
          </button>
        </div>
      </form>
    </section>
  );
}
