import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { DEFAULT_CONFIG } from '../../../widget/src/types';
import { api, ApiError, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { Field, FormError, Loading, PageHeader, QueryError, ReadOnlyNote } from '../components/ui';
import { WidgetKeys } from '../components/WidgetKeys';
import { projectKey, usePermissions, useProject, useProjectId } from '../lib/project';

type WidgetSettings = components['schemas']['WidgetSettings'];
type Form = Required<WidgetSettings>;

const COLORS = [
  ['primaryColor', 'Primary color', 'Launcher, header and your visitors’ messages.'],
  ['bgColor', 'Background color', 'The panel.'],
  ['textColor', 'Text color', 'Text in the panel.'],
  ['navigationCardColor', 'Card color', 'Skill and conversation cards on the home screen.'],
] as const;

/** The widget's defaults (what GET /widget/config answers for a field the project does not set), without the skills. */
// `handoff` comes from the project's handoff settings (the Settings page), not from the widget's look.
const { availableSkills: _skills, handoff: _handoff, ...DEFAULTS } = DEFAULT_CONFIG;
const formOf = (widget: WidgetSettings | undefined): Form => ({ ...DEFAULTS, ...widget });

/** The starter questions as saved and shown: each line trimmed, blank lines left out. */
function cleanQuestions(lines: string[]): string[] {
  return lines.map((q) => q.trim()).filter(Boolean);
}

/** A hex color the color picker can show (it only takes #rrggbb). */
function pickerValue(color: string): string {
  return /^#[0-9a-f]{6}$/i.test(color) ? color : '#000000';
}

/**
 * Every WidgetConfig field, with the real widget beside the form: /widget.js on a preview page in a
 * frame, fed the unsaved values on every change. Below: the install snippet, the keys and the HMAC
 * secret.
 */
export function Widget() {
  const projectId = useProjectId();
  const project = useProject();
  const can = usePermissions();
  const queryClient = useQueryClient();
  const [form, setForm] = useState<Form | null>(null);
  const [saved, setSaved] = useState(false);
  const frame = useRef<HTMLIFrameElement>(null);
  const [previewReady, setPreviewReady] = useState(false);
  const skills = useQuery({
    queryKey: ['projects', projectId, 'skills', 'enabled'],
    queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects/{projectId}/skills', { params: { path: { projectId }, query: { enabled: 'true' } } })).skills,
  });

  useEffect(() => {
    if (project.data && !form) setForm(formOf(project.data.settings.widget));
  }, [project.data, form]);

  // The preview page says when it listens; from then on it gets every change.
  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      if (event.origin === location.origin && event.source === frame.current?.contentWindow && event.data?.type === 'answerdesk:preview-ready') setPreviewReady(true);
    };
    window.addEventListener('message', onMessage);
    return () => window.removeEventListener('message', onMessage);
  }, []);
  useEffect(() => {
    if (!previewReady || !form) return;
    const availableSkills = (skills.data ?? []).map((s) => ({ id: s.id, name: s.name, description: s.description }));
    // A short pause so that typing a color does not restart the widget on every key.
    const timer = setTimeout(() => {
      frame.current?.contentWindow?.postMessage({ type: 'answerdesk:preview', config: { ...form, starterQuestions: cleanQuestions(form.starterQuestions), availableSkills }, open: true }, location.origin);
    }, 150);
    return () => clearTimeout(timer);
  }, [previewReady, form, skills.data]);

  const save = useMutation({
    mutationFn: async (widget: Form) =>
      unwrap(await api.PATCH('/api/v1/admin/projects/{projectId}', { params: { path: { projectId } }, body: { settings: { widget } } })).project,
    onSuccess: (updated) => {
      queryClient.setQueryData(projectKey(projectId), updated);
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
    save.mutate({ ...form, starterQuestions: cleanQuestions(form.starterQuestions) });
  };
  const readOnly = !can.configure;
  const fieldError = (name: keyof Form) => err?.fieldError(`settings.widget.${name}`);

  return (
    <>
      <PageHeader title="Widget" description="How the chat widget looks on your site, and how to install it." />
      <ReadOnlyNote show={readOnly} />
      <div className="widget-layout">
        <form className="card stack" onSubmit={submit} noValidate aria-label="Widget appearance">
          {COLORS.map(([name, label, hint]) => (
            <Field key={name} label={label} hint={hint} error={fieldError(name)}>
              {(p) => (
                <div className="row">
                  <input type="color" aria-label={`${label} picker`} value={pickerValue(form[name])} onChange={(e) => set({ [name]: e.target.value })} disabled={readOnly} />
                  <input {...p} type="text" value={form[name]} onChange={(e) => set({ [name]: e.target.value })} readOnly={readOnly} style={{ flex: 1, width: 'auto' }} />
                </div>
              )}
            </Field>
          ))}
          <Field label="Position" error={fieldError('position')}>
            {(p) => (
              <select {...p} value={form.position} onChange={(e) => set({ position: e.target.value as Form['position'] })} disabled={readOnly}>
                <option value="bottom-right">Bottom right</option>
                <option value="bottom-left">Bottom left</option>
              </select>
            )}
          </Field>
          <Field label="Font family" hint="A CSS font-family list." error={fieldError('fontFamily')}>
            {(p) => <input {...p} type="text" value={form.fontFamily} onChange={(e) => set({ fontFamily: e.target.value })} readOnly={readOnly} />}
          </Field>
          <Field label="Launcher icon" hint="An image URL, a data: URL or an emoji. Empty: the chat bubble." error={fieldError('fabIcon')}>
            {(p) => <input {...p} type="text" value={form.fabIcon} onChange={(e) => set({ fabIcon: e.target.value })} readOnly={readOnly} />}
          </Field>
          <Field label="Launcher text" hint="Up to 40 characters beside the icon, such as “Help”." error={fieldError('fabText')}>
            {(p) => <input {...p} type="text" value={form.fabText} onChange={(e) => set({ fabText: e.target.value })} readOnly={readOnly} />}
          </Field>
          <Field label="Starter questions" hint="One per line, up to 6: shown on the home screen for visitors to tap." error={fieldError('starterQuestions')}>
            {(p) => (
              <textarea
                {...p}
                rows={3}
                value={form.starterQuestions.join('\n')}
                // The lines as typed, blank ones included (a new line between two questions starts
                // blank): a blank line dropped here would move the cursor and join what is typed
                // next onto another question. Blanks and spaces are left out when saving.
                onChange={(e) => set({ starterQuestions: e.target.value.split('\n') })}
                readOnly={readOnly}
              />
            )}
          </Field>
          <label className="checkbox">
            <input type="checkbox" checked={form.showBranding} onChange={(e) => set({ showBranding: e.target.checked })} disabled={readOnly} />
            Show “Powered by AnswerDesk”
          </label>
          <FormError error={save.error} />
          {saved ? (
            <p className="success" role="status">
              Saved: visitors see the new look within a few minutes.
            </p>
          ) : null}
          <div className="row">
            <button type="submit" disabled={readOnly || save.isPending}>
              Save widget
            </button>
            <button type="button" className="secondary" disabled={readOnly} onClick={() => set(formOf(undefined))}>
              Reset to defaults
            </button>
          </div>
        </form>
        <section aria-labelledby="preview-title">
          <h2 id="preview-title" className="sr-only">
            Live preview
          </h2>
          <iframe ref={frame} className="preview-frame" title="Live preview of the widget" src="/dashboard/preview.html" />
          <p className="muted">Live preview of the real widget with the values above (saved or not). Messages typed here are not sent.</p>
        </section>
      </div>
      <WidgetKeys projectId={projectId} canConfigure={can.configure} />
    </>
  );
}
