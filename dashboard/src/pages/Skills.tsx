import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { ConfirmButton, EnableSwitch, errorsUnder, formLevelError } from '../components/kit/kit';
import '../components/kit/pages.css';
import { Field, FormError, PageHeader, QueryStatus, ReadOnlyNote } from '../components/ui';
import { usePermissions, useProjectId } from '../lib/project';

type Skill = components['schemas']['AdminSkill'];
interface Draft {
  name: string;
  description: string;
  instructions: string;
  enabled: boolean;
}
const EMPTY: Draft = { name: '', description: '', instructions: '', enabled: true };

const skillsKey = (projectId: string) => ['projects', projectId, 'skills'] as const;

/** Skills: the workflows the agent offers in the widget and follows with their instructions. */
export function Skills() {
  const projectId = useProjectId();
  const perms = usePermissions();
  const queryClient = useQueryClient();
  const skills = useQuery({
    queryKey: skillsKey(projectId),
    queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects/{projectId}/skills', { params: { path: { projectId } } })).skills,
  });
  // null: no editor open; 'new': creating; an id: editing that skill.
  const [editing, setEditing] = useState<string | null>(null);
  const [flash, setFlash] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: skillsKey(projectId) });

  const toggle = useMutation({
    mutationFn: async (s: Skill) =>
      unwrap(await api.PATCH('/api/v1/admin/projects/{projectId}/skills/{skillId}', { params: { path: { projectId, skillId: s.id } }, body: { enabled: !s.enabled } })),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: async (skillId: string) =>
      unwrap(await api.DELETE('/api/v1/admin/projects/{projectId}/skills/{skillId}', { params: { path: { projectId, skillId } } })),
    onSuccess: (_, skillId) => {
      if (editing === skillId) setEditing(null);
    },
    onSettled: refresh,
  });

  const current = editing && editing !== 'new' ? skills.data?.find((s) => s.id === editing) : undefined;

  return (
    <>
      <PageHeader title="Skills" description="Workflows the widget offers and the agent follows, such as “Track an order”.">
        <button type="button" onClick={() => setEditing('new')} disabled={!perms.configure}>
          New skill
        </button>
      </PageHeader>
      <ReadOnlyNote show={!perms.configure} />
      <QueryStatus query={skills} isEmpty={!!skills.data && skills.data.length === 0} empty="No skills yet." />
      {skills.data && skills.data.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="sr-only">Skills</caption>
            <thead>
              <tr>
                <th scope="col">Skill</th>
                <th scope="col">Enabled</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {skills.data.map((s) => (
                <tr key={s.id} data-skill-id={s.id}>
                  <td>
                    <strong>{s.name}</strong>
                    {s.description ? <div className="muted">{s.description}</div> : null}
                  </td>
                  <td>
                    <EnableSwitch label={`Enable ${s.name}`} checked={s.enabled} disabled={!perms.configure} onToggle={() => toggle.mutateAsync(s)} />
                  </td>
                  <td>
                    <div className="row">
                      <button type="button" className="secondary" onClick={() => setEditing(s.id)} aria-label={`${perms.configure ? 'Edit' : 'View'} ${s.name}`}>
                        {perms.configure ? 'Edit' : 'View'}
                      </button>
                      <ConfirmButton label="Delete" confirmLabel={`Delete ${s.name}`} disabled={!perms.configure} busy={remove.isPending} onConfirm={() => remove.mutate(s.id)} />
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <FormError error={toggle.error ?? remove.error} />
      {editing ? (
        <SkillEditor
          key={editing}
          projectId={projectId}
          skill={current}
          canConfigure={perms.configure}
          flash={flash}
          onEdit={() => setFlash(null)}
          onClose={() => {
            setEditing(null);
            setFlash(null);
          }}
          onSaved={(s) => {
            // The list holds the saved skill before the editor opens on it (no flash of an empty form).
            queryClient.setQueryData<Skill[]>(skillsKey(projectId), (list) =>
              list ? (list.some((x) => x.id === s.id) ? list.map((x) => (x.id === s.id ? s : x)) : [...list, s]) : [s],
            );
            setEditing(s.id);
            setFlash(`Saved “${s.name}”.`);
            refresh();
          }}
        />
      ) : null}
    </>
  );
}

function SkillEditor({
  projectId,
  skill,
  canConfigure,
  flash,
  onEdit,
  onClose,
  onSaved,
}: {
  projectId: string;
  skill: Skill | undefined;
  canConfigure: boolean;
  flash: string | null;
  onEdit: () => void;
  onClose: () => void;
  onSaved: (s: Skill) => void;
}) {
  const [draft, setDraft] = useState<Draft>(skill ? { name: skill.name, description: skill.description, instructions: skill.instructions, enabled: skill.enabled } : EMPTY);
  // The switch in the list may turn the skill on or off while this form is open: until the form's
  // own box is ticked, the box shows the stored value and a save leaves it alone.
  const [enabledTouched, setEnabledTouched] = useState(false);
  const enabled = enabledTouched || !skill ? draft.enabled : skill.enabled;
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);
  const save = useMutation({
    mutationFn: async () =>
      skill
        ? unwrap(
            await api.PATCH('/api/v1/admin/projects/{projectId}/skills/{skillId}', {
              params: { path: { projectId, skillId: skill.id } },
              body: enabledTouched ? draft : { name: draft.name, description: draft.description, instructions: draft.instructions },
            }),
          ).skill
        : unwrap(await api.POST('/api/v1/admin/projects/{projectId}/skills', { params: { path: { projectId } }, body: draft })).skill,
    onSuccess: (s) => onSaved(s),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onEdit();
    save.mutate();
  };
  const err = save.error;
  const set = (patch: Partial<Draft>) => {
    onEdit();
    setDraft((d) => ({ ...d, ...patch }));
  };
  return (
    <section className="card" aria-labelledby="skill-editor-heading">
      <h2 id="skill-editor-heading" tabIndex={-1} ref={headingRef}>
        {skill ? `Edit skill “${skill.name}”` : 'New skill'}
      </h2>
      <form className="stack" onSubmit={submit} noValidate>
        <Field label="Name" hint="Shown to end users in the widget." error={errorsUnder(err, 'name')}>
          {(p) => <input {...p} type="text" maxLength={100} value={draft.name} onChange={(e) => set({ name: e.target.value })} disabled={!canConfigure} />}
        </Field>
        <Field label="Description" hint="One or two sentences shown beside the name." error={errorsUnder(err, 'description')}>
          {(p) => <input {...p} type="text" maxLength={1000} value={draft.description} onChange={(e) => set({ description: e.target.value })} disabled={!canConfigure} />}
        </Field>
        <Field label="Instructions" hint="How the agent carries out this workflow; added to its prompt while the skill is enabled." error={errorsUnder(err, 'instructions')}>
          {(p) => <textarea {...p} rows={8} value={draft.instructions} onChange={(e) => set({ instructions: e.target.value })} disabled={!canConfigure} />}
        </Field>
        <label className="checkbox">
          <input
            type="checkbox"
            checked={enabled}
            onChange={(e) => {
              setEnabledTouched(true);
              set({ enabled: e.target.checked });
            }}
            disabled={!canConfigure}
          />
          Enabled
        </label>
        <FormError error={err ? formLevelError(err, ['name', 'description', 'instructions', 'enabled']) : null} />
        {flash ? (
          <p className="success" role="status">
            {flash}
          </p>
        ) : null}
        <div className="row">
          <button type="submit" disabled={!canConfigure || save.isPending}>
            {skill ? 'Save skill' : 'Create skill'}
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            Close
          </button>
        </div>
      </form>
    </section>
  );
}
