import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, ApiError, unwrap } from '../api/client';
import { Field, FormError, Loading, PageHeader, QueryError, ReadOnlyNote } from '../components/ui';
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
}

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
  };
}

/** A number field: its text as a number, or undefined when left empty (the server's default applies). */
function num(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

/**
 * The PATCH body: what the form says, settings merged one level deep by the server. An empty Model
 * or TTL is sent as null, which removes the stored value so the default applies again (leaving the
 * key out would keep it).
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
  useEffect(() => setForm(null), [projectId]);
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
