import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { ActionEditor } from '../components/actions/ActionEditor';
import { ActionTest } from '../components/actions/ActionTest';
import { CallLog } from '../components/actions/CallLog';
import { ConfirmButton, EnableSwitch } from '../components/kit/kit';
import '../components/kit/pages.css';
import { FormError, PageHeader, QueryStatus, ReadOnlyNote } from '../components/ui';
import { usePermissions, useProjectId } from '../lib/project';

export type Action = components['schemas']['Action'];
export const actionsKey = (projectId: string) => ['projects', projectId, 'actions'] as const;

/** Actions: your HTTP endpoints the agent may call, their definitions, a test bench and the call log. */
export function Actions() {
  const projectId = useProjectId();
  const perms = usePermissions();
  const queryClient = useQueryClient();
  const actions = useQuery({
    queryKey: actionsKey(projectId),
    queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects/{projectId}/actions', { params: { path: { projectId } } })).actions,
  });
  // null: nothing open; 'new': the editor for a new action; an id: that action's editor, test and log.
  const [open, setOpen] = useState<string | null>(null);
  const [flash, setFlash] = useState<string | null>(null);
  // Bumped on every save: the editor starts again from the stored action (secret inputs emptied).
  const [version, setVersion] = useState(0);
  const refresh = () => queryClient.invalidateQueries({ queryKey: actionsKey(projectId) });

  const toggle = useMutation({
    mutationFn: async (a: Action) =>
      unwrap(await api.PATCH('/api/v1/admin/projects/{projectId}/actions/{actionId}', { params: { path: { projectId, actionId: a.id } }, body: { enabled: !a.enabled } })),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: async (actionId: string) =>
      unwrap(await api.DELETE('/api/v1/admin/projects/{projectId}/actions/{actionId}', { params: { path: { projectId, actionId } } })),
    onSuccess: (_, actionId) => {
      if (open === actionId) setOpen(null);
    },
    onSettled: refresh,
  });

  const current = open && open !== 'new' ? actions.data?.find((a) => a.id === open) : undefined;

  return (
    <>
      <PageHeader title="Actions" description="Endpoints of yours the agent may call while it answers: look up an order, resend an invoice.">
        <button
          type="button"
          disabled={!perms.configure}
          onClick={() => {
            setOpen('new');
            setFlash(null);
          }}
        >
          New action
        </button>
      </PageHeader>
      <ReadOnlyNote show={!perms.configure} />
      <QueryStatus query={actions} isEmpty={!!actions.data && actions.data.length === 0} empty="No actions yet." />
      {actions.data && actions.data.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="sr-only">Actions</caption>
            <thead>
              <tr>
                <th scope="col">Action</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Enabled</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {actions.data.map((a) => (
                <tr key={a.id} data-action-id={a.id} aria-current={open === a.id ? 'true' : undefined}>
                  <td>
                    <strong>{a.name}</strong>
                    <div className="muted">{a.description}</div>
                  </td>
                  <td className="small-break">
                    <code>
                      {a.method} {a.url}
                    </code>
                  </td>
                  <td>
                    <EnableSwitch label={`Enable ${a.name}`} checked={a.enabled} disabled={!perms.configure} onToggle={() => toggle.mutateAsync(a)} />
                  </td>
                  <td>
                    <div className="row">
                      <button
                        type="button"
                        className="secondary"
                        aria-label={`Open ${a.name}`}
                        onClick={() => {
                          setOpen(a.id);
                          setFlash(null);
                        }}
                      >
                        Open
                      </button>
                      <ConfirmButton label="Delete" confirmLabel={`Delete ${a.name}`} disabled={!perms.configure} busy={remove.isPending} onConfirm={() => remove.mutate(a.id)} />
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <FormError error={toggle.error ?? remove.error} />
      {open === 'new' || current ? (
        <ActionEditor
          key={`${open}-${version}`}
          projectId={projectId}
          action={current}
          canConfigure={perms.configure}
          flash={flash}
          onEdit={() => setFlash(null)}
          onClose={() => setOpen(null)}
          onSaved={(a, created) => {
            queryClient.setQueryData<Action[]>(actionsKey(projectId), (list) =>
              list ? (created ? [...list, a] : list.map((x) => (x.id === a.id ? a : x))) : list,
            );
            setOpen(a.id);
            setVersion((v) => v + 1);
            setFlash(created ? `Created “${a.name}”. Try it with Test below.` : `Saved “${a.name}”.`);
            refresh();
          }}
        />
      ) : null}
      {current ? (
        <>
          <ActionTest key={`test-${current.id}`} projectId={projectId} action={current} canConfigure={perms.configure} />
          <CallLog projectId={projectId} action={current} />
        </>
      ) : null}
    </>
  );
}
