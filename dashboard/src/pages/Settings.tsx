import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, ApiError, unwrap } from '../api/client';
import { CheckboxField, Field, FormError, Loading, PageHeader, QueryError, ReadOnlyNote } from '../components/ui';
import { projectKey, projectsKey, usePermissions, useProject, useProjectId, type Project } from '../lib/project';

interface Form {
  name: string;
  instructions: string;
  model: string;
  conversationTtlMinutes: string;
  identityVerification: 'optional' | 'required';
  allowedOrigins: string;
  chat: string;
  session: string;
  general: string;
  handoffEnabled: boolean;
  afterDeclined: string;
  onNegativeFeedback: boolean;
  officeHoursText: string;
}

/** The handoff settings as the server applies them when the project has none (docs/handoff.md). */
const HANDOFF_DEFAULTS = { handoffEnabled: true, afterDeclined: '', onNegativeFeedback: false, officeHoursText: '' } satisfies Partial<Form>;

function formOf(project: Project): Form {
  const s = project.settings;
  return {
    name: project.name,
    instructions: s.instructions ?? '',
    model: s.model ?? '',
    conversationTtlMinutes: s.conversationTtlMinutes === undefined ? '' : String(s.conversationTtlMinutes),
    identityVerification: s.identityVerification ?? 'optional',
    allowedOrigins: (s.allowedOrigins ?? []).join('\n'),
    chat: s.rateLimits?.chat === undefined ? '' : String(s.rateLimits.chat),
    session: s.rateLimits?.session === undefined ? '' : String(s.rateLimits.session),
    general: s.rateLimits?.general === undefined ? '' : String(s.rateLimits.general),
    handoffEnabled: s.handoff?.enabled ?? HANDOFF_DEFAULTS.handoffEnabled,
    afterDeclined: s.handoff?.afterDeclined == null ? '' : String(s.handoff.afterDeclined),
    onNegativeFeedback: s.handoff?.onNegativeFeedback ?? HANDOFF_DEFAULTS.onNegativeFeedback,
    officeHoursText: s.handoff?.officeHoursText ?? '',
  };
}

/**
 * The handoff settings to send: null when the form holds the defaults (the stored ones are removed,
 * so the server's defaults apply), else every field, an empty one as null ("never", "no text").
 */
function handoffOf(form: Form) {
  const text = form.officeHoursText.trim();
  const after = num(form.afterDeclined);
  if (form.handoffEnabled === HANDOFF_DEFAULTS.handoffEnabled && after === undefined && form.onNegativeFeedback === HANDOFF_DEFAULTS.onNegativeFeedback && !text)
    return null;
  return { enabled: form.handoffEnabled, afterDeclined: after ?? null, onNegativeFeedback: form.onNegativeFeedback, officeHoursText: text || null };
}

/** A number field: its text as a number, or undefined when left empty (the server's default applies). */
function num(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

/**
 * The PATCH body: what the form says, settings merged one level deep by the server. An empty Model
 * or TTL is sent as null, which removes the stored value so the default applies again (leaving the
 * key out would keep it); so are the handoff settings when the form holds their defaults.
 */
function bodyOf(form: Form) {
  const rateLimits = { chat: num(form.chat), session: num(form.session), general: num(form.general) };
  return {
    name: form.name,
    settings: {
      instructions: form.instructions,
      model: form.model.trim() || null,
      conversationTtlMinutes: num(form.conversationTtlMinutes) ?? null,
      identityVerification: form.identityVerification,
      allowedOrigins: form.allowedOrigins
        .split('\n')
        .map((o) => o.trim())
        .filter(Boolean),
      rateLimits: Object.fromEntries(Object.entries(rateLimits).filter(([, v]) => v !== undefined)),
      handoff: handoffOf(form),
    },
  };
}

export function Settings() {
  const projectId = useProjectId();
  const project = useProject();
  const can = usePermissions();
  const queryClient = useQueryClient();
  const [form, setForm] = useState<Form | null>(null);
  const [saved, setSaved] = useState(false);

  // The form starts from the stored project, once per project: a refetch never overwrites edits.
  useEffect(() => {
    if (project.data && !form) setForm(formOf(project.data));
  }, [project.data, form]);

  const save = useMutation({
    mutationFn: async (f: Form) =>
      unwrap(await api.PATCH('/api/v1/admin/projects/{projectId}', { params: { path: { projectId } }, body: bodyOf(f) })).project,
    onSuccess: (updated) => {
      queryClient.setQueryData(projectKey(projectId), updated);
      void queryClient.invalidateQueries({ queryKey: projectsKey });
      setForm(formOf(updated));
      setSaved(true);
    },
  });

  if (project.isPending || (!form && !project.isError)) return <Loading />;
  if (project.isError) return <QueryError error={project.error} />;
  if (!form) return null;

  const err = save.error instanceof ApiError ? save.error : undefined;
  const set = (patch: Partial<Form>) => {
    setSaved(false);
    setForm({ ...form, ...patch });
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(form);
  };
  const readOnly = !can.configure;

  return (
    <>
      <PageHeader title="Settings" description="How the assistant of this project behaves, and who may use it." />
      <ReadOnlyNote show={readOnly} />
      <form className="card stack" onSubmit={submit} noValidate aria-label="Project settings">
        <Field label="Project name" error={err?.fieldError('name')}>
          {(p) => <input {...p} type="text" value={form.name} onChange={(e) => set({ name: e.target.value })} readOnly={readOnly} />}
        </Field>
        <Field label="Instructions" hint="Added to the assistant's system prompt: tone, what to do and not to do." error={err?.fieldError('settings.instructions')}>
          {(p) => <textarea {...p} rows={6} value={form.instructions} onChange={(e) => set({ instructions: e.target.value })} readOnly={readOnly} />}
        </Field>
        <Field
          label="Model"
          hint="builtin, openai:<model>, anthropic:<model> or openai-compatible:<model>. Empty: the server's default."
          error={err?.fieldError('settings.model')}
        >
          {(p) => <input {...p} type="text" value={form.model} placeholder="builtin" onChange={(e) => set({ model: e.target.value })} readOnly={readOnly} />}
        </Field>
        <Field label="Conversation TTL (minutes)" hint="Idle minutes after which a conversation counts as closed. Empty: 1440 (one day)." error={err?.fieldError('settings.conversationTtlMinutes')}>
          {(p) => (
            <input {...p} type="number" min={1} max={525600} value={form.conversationTtlMinutes} onChange={(e) => set({ conversationTtlMinutes: e.target.value })} readOnly={readOnly} />
          )}
        </Field>
        <Field label="Identity verification" hint="Required: calls that name an end user must carry their HMAC or identity token." error={err?.fieldError('settings.identityVerification')}>
          {(p) => (
            <select {...p} value={form.identityVerification} onChange={(e) => set({ identityVerification: e.target.value as Form['identityVerification'] })} disabled={readOnly}>
              <option value="optional">Optional</option>
              <option value="required">Required</option>
            </select>
          )}
        </Field>
        <Field
          label="Allowed origins"
          hint="One per line, such as https://shop.example. Empty: the widget works on any site."
          error={err?.details.find((d) => d.path.startsWith('settings.allowedOrigins'))?.message}
        >
          {(p) => <textarea {...p} rows={3} value={form.allowedOrigins} onChange={(e) => set({ allowedOrigins: e.target.value })} readOnly={readOnly} />}
        </Field>
        <fieldset className="stack">
          <legend>Rate limits (requests per minute per visitor; empty keeps the current value)</legend>
          <div className="grid-2">
            <Field label="Chat messages" hint="Default 30." error={err?.fieldError('settings.rateLimits.chat')}>
              {(p) => <input {...p} type="number" min={1} value={form.chat} onChange={(e) => set({ chat: e.target.value })} readOnly={readOnly} />}
            </Field>
            <Field label="New conversations" hint="Default 10." error={err?.fieldError('settings.rateLimits.session')}>
              {(p) => <input {...p} type="number" min={1} value={form.session} onChange={(e) => set({ session: e.target.value })} readOnly={readOnly} />}
            </Field>
            <Field label="Other calls" hint="Default 60." error={err?.fieldError('settings.rateLimits.general')}>
              {(p) => <input {...p} type="number" min={1} value={form.general} onChange={(e) => set({ general: e.target.value })} readOnly={readOnly} />}
            </Field>
          </div>
        </fieldset>
        <fieldset className="stack">
          <legend>Handoff to a person</legend>
          <p className="muted">
            When a conversation goes to your team: people then answer it from Conversations, and the assistant stays quiet until it is handed back.
          </p>
          <CheckboxField
            label="Visitors and the assistant can ask for a person"
            hint="On (the default): the widget shows “Talk to a person”, and the assistant can hand a conversation over. Off: neither, and the rules below do not apply; your team can still take a conversation over from Conversations."
            checked={form.handoffEnabled}
            onChange={(handoffEnabled) => set({ handoffEnabled })}
            disabled={readOnly}
          />
          <Field
            label="Hand off after this many declined answers in a row"
            hint="Declined: the assistant searched your knowledge and found nothing to answer with. 1 to 20; empty: never (the default)."
            error={err?.fieldError('settings.handoff.afterDeclined')}
          >
            {(p) => (
              <input {...p} type="number" min={1} max={20} step={1} value={form.afterDeclined} onChange={(e) => set({ afterDeclined: e.target.value })} readOnly={readOnly} />
            )}
          </Field>
          <CheckboxField
            label="Hand off when a visitor rates an answer as not helpful"
            hint="Off by default."
            checked={form.onNegativeFeedback}
            onChange={(onNegativeFeedback) => set({ onNegativeFeedback })}
            disabled={readOnly}
          />
          <Field
            label="Office hours text"
            hint="Shown in the widget while a visitor waits for a person, such as “We reply Mon–Fri, 9:00–17:00 CET.” Up to 500 characters; empty: none."
            error={err?.fieldError('settings.handoff.officeHoursText')}
          >
            {(p) => <textarea {...p} rows={2} value={form.officeHoursText} onChange={(e) => set({ officeHoursText: e.target.value })} readOnly={readOnly} />}
          </Field>
          <div>
            <button type="button" className="secondary" disabled={readOnly} onClick={() => set(HANDOFF_DEFAULTS)}>
              Restore the handoff defaults
            </button>
          </div>
        </fieldset>
        <FormError error={save.error} />
        {saved ? (
          <p className="success" role="status">
            Saved.
          </p>
        ) : null}
        <div>
          <button type="submit" disabled={readOnly || save.isPending}>
            Save settings
          </button>
        </div>
      </form>
      {can.owner && project.data ? <DeleteProject projectId={projectId} name={project.data.name} /> : null}
    </>
  );
}

/** Deleting a project removes everything in it: the name must be typed to confirm. */
function DeleteProject({ projectId, name }: { projectId: string; name: string }) {
  const [typed, setTyped] = useState('');
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const remove = useMutation({
    mutationFn: async () => unwrap(await api.DELETE('/api/v1/admin/projects/{projectId}', { params: { path: { projectId } } })),
    onSuccess: async () => {
      queryClient.removeQueries({ queryKey: projectKey(projectId) });
      await queryClient.invalidateQueries({ queryKey: projectsKey });
      navigate('/', { replace: true });
    },
  });
  return (
    <section className="card stack" aria-labelledby="danger-zone">
      <h2 id="danger-zone">Delete this project</h2>
      <p>Deletes the project with everything in it: keys, knowledge, actions, skills, conversations and feedback. This cannot be undone.</p>
      <Field label={`Type the project name (${name}) to confirm`}>
        {(p) => <input {...p} type="text" value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />}
      </Field>
      <FormError error={remove.error} />
      <div>
        <button type="button" className="danger" disabled={typed !== name || remove.isPending} onClick={() => remove.mutate()}>
          Delete project
        </button>
      </div>
    </section>
  );
}
