import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ApiError, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { ConfirmButton, useFocusAfterRemoval } from '../components/kit/kit';
import { Field, FormError, Loading, PageHeader, QueryError, formatDateTime } from '../components/ui';
import { useMe, type ProjectRole } from '../lib/auth';
import { useProjects, type Project } from '../lib/project';

type User = components['schemas']['User'];
type Invite = components['schemas']['Invite'];
const USERS_KEY = ['users'];
const INVITES_KEY = ['invites'];

/** Owners: who may use the dashboard, with which role on which project; invites. */
export function Users() {
  const me = useMe();
  if (me.user.role !== 'owner') {
    return (
      <>
        <PageHeader title="Users" />
        <p className="form-error">Only owners manage users.</p>
      </>
    );
  }
  return <UsersForOwner />;
}

function UsersForOwner() {
  const users = useQuery({ queryKey: USERS_KEY, queryFn: async () => unwrap(await api.GET('/api/v1/admin/users')).users });
  const projects = useProjects();
  return (
    <>
      <PageHeader title="Users" description="Owners manage everything, users included. Members get a role per project: admin (configure), agent (work conversations) or viewer (read only)." />
      <InviteForm projects={projects.data ?? []} />
      <Invites />
      <section className="card" aria-labelledby="users-title">
        <h2 id="users-title">People</h2>
        {users.isPending || projects.isPending ? <Loading /> : null}
        {users.isError ? <QueryError error={users.error} /> : null}
        {users.data && projects.data ? (
          <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
            {users.data.map((u) => (
              <UserRow key={u.id} user={u} projects={projects.data} />
            ))}
          </ul>
        ) : null}
      </section>
    </>
  );
}

function UserRow({ user, projects }: { user: User; projects: Project[] }) {
  const me = useMe();
  const queryClient = useQueryClient();
  const done = () => queryClient.invalidateQueries({ queryKey: USERS_KEY });
  const setRole = useMutation({
    mutationFn: async (role: 'owner' | 'member') => unwrap(await api.PATCH('/api/v1/admin/users/{userId}', { params: { path: { userId: user.id } }, body: { role } })),
    onSuccess: done,
  });
  const setMembership = useMutation({
    mutationFn: async ({ projectId, role }: { projectId: string; role: ProjectRole | '' }) =>
      role
        ? unwrap(await api.PUT('/api/v1/admin/users/{userId}/memberships/{projectId}', { params: { path: { userId: user.id, projectId } }, body: { role } }))
        : unwrap(await api.DELETE('/api/v1/admin/users/{userId}/memberships/{projectId}', { params: { path: { userId: user.id, projectId } } })),
    onSuccess: done,
  });
  const remove = useMutation({
    mutationFn: async () => unwrap(await api.DELETE('/api/v1/admin/users/{userId}', { params: { path: { userId: user.id } } })),
    onSuccess: done,
  });
  const self = user.id === me.user.id;
  return (
    <li className="card" data-user-email={user.email}>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <div className="wrap-anywhere">
          <strong>{user.name}</strong> <span className="muted">{user.email}</span>
          {self ? <span className="badge"> you</span> : null}
          <div className="muted">Since {formatDateTime(user.createdAt)}</div>
        </div>
        <Field label={`Role of ${user.name}`}>
          {(p) => (
            <select {...p} value={user.role} onChange={(e) => setRole.mutate(e.target.value as 'owner' | 'member')} disabled={setRole.isPending}>
              <option value="owner">Owner</option>
              <option value="member">Member</option>
            </select>
          )}
        </Field>
      </div>
      <FormError error={setRole.error} />
      {user.role === 'member' ? (
        <div className="grid-2">
          {projects.map((project) => (
            <Field key={project.id} label={`${user.name} on ${project.name}`}>
              {(p) => (
                <select
                  {...p}
                  value={user.memberships.find((m) => m.projectId === project.id)?.role ?? ''}
                  onChange={(e) => setMembership.mutate({ projectId: project.id, role: e.target.value as ProjectRole | '' })}
                  disabled={setMembership.isPending}
                >
                  <option value="">No access</option>
                  <option value="admin">Admin</option>
                  <option value="agent">Agent</option>
                  <option value="viewer">Viewer</option>
                </select>
              )}
            </Field>
          ))}
        </div>
      ) : (
        <p className="muted">Owners reach every project.</p>
      )}
      <FormError error={setMembership.error} />
      <FormError error={remove.error} />
      {self ? null : (
        <div>
          <ConfirmButton
            label={`Remove ${user.name}`}
            action="Remove"
            confirmLabel={`Yes, remove ${user.name}`}
            busy={remove.isPending}
            onConfirm={() => remove.mutate()}
          />
        </div>
      )}
    </li>
  );
}

function InviteForm({ projects }: { projects: Project[] }) {
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'owner' | 'member'>('member');
  const [projectId, setProjectId] = useState('');
  const [projectRole, setProjectRole] = useState<ProjectRole>('agent');
  const invite = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/v1/admin/invites', {
          body: { email, role, projects: role === 'member' && (projectId || projects[0]?.id) ? [{ projectId: projectId || projects[0]!.id, role: projectRole }] : [] },
        }),
      ),
    onSuccess: () => {
      setEmail('');
      void queryClient.invalidateQueries({ queryKey: INVITES_KEY });
    },
  });
  const err = invite.error instanceof ApiError ? invite.error : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };
  const link = invite.data ? new URL(invite.data.url, location.origin).href : null;
  return (
    <form className="card stack" onSubmit={submit} noValidate aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <div className="grid-2">
        <Field label="Email" error={err?.fieldError('email')}>
          {(p) => <input {...p} type="email" value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <Field label="Account role" error={err?.fieldError('role')}>
          {(p) => (
            <select {...p} value={role} onChange={(e) => setRole(e.target.value as 'owner' | 'member')}>
              <option value="member">Member</option>
              <option value="owner">Owner</option>
            </select>
          )}
        </Field>
        {role === 'member' ? (
          <>
            <Field label="Project">
              {(p) => (
                <select {...p} value={projectId || projects[0]?.id || ''} onChange={(e) => setProjectId(e.target.value)}>
                  {projects.map((project) => (
                    <option key={project.id} value={project.id}>
                      {project.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Project role">
              {(p) => (
                <select {...p} value={projectRole} onChange={(e) => setProjectRole(e.target.value as ProjectRole)}>
                  <option value="admin">Admin</option>
                  <option value="agent">Agent</option>
                  <option value="viewer">Viewer</option>
                </select>
              )}
            </Field>
          </>
        ) : null}
      </div>
      <FormError error={invite.error} />
      {link ? (
        <div className="notice wrap-anywhere" role="status">
          <p>Send this one-time link to {invite.data?.invite.email} (it works once, until {formatDateTime(invite.data?.invite.expiresAt)}):</p>
          <pre>
            <code data-invite-link>{link}</code>
          </pre>
        </div>
      ) : null}
      <div>
        <button type="submit" disabled={invite.isPending}>
          Create invite link
        </button>
      </div>
    </form>
  );
}

function Invites() {
  const queryClient = useQueryClient();
  const invites = useQuery({ queryKey: INVITES_KEY, queryFn: async () => unwrap(await api.GET('/api/v1/admin/invites')).invites });
  const revoke = useMutation({
    mutationFn: async (inviteId: string) => unwrap(await api.DELETE('/api/v1/admin/invites/{inviteId}', { params: { path: { inviteId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: INVITES_KEY }),
  });
  if (!invites.data?.length) return invites.isError ? <QueryError error={invites.error} /> : null;
  return (
    <section className="card" aria-labelledby="invites-title">
      <h2 id="invites-title">Open invites</h2>
      <ul>
        {invites.data.map((i) => (
          <InviteRow key={i.id} invite={i} revoking={revoke.isPending && revoke.variables === i.id} onRevoke={() => revoke.mutate(i.id)} />
        ))}
      </ul>
      <FormError error={revoke.error} />
    </section>
  );
}

/** An open invite; Revoke is disabled while its request is under way, so a second press sends nothing. */
function InviteRow({ invite: i, revoking, onRevoke }: { invite: Invite; revoking: boolean; onRevoke: () => void }) {
  // Once revoked the row goes away: the focus moves to the next invite's Revoke, not to the top of the page.
  const arm = useFocusAfterRemoval('Revoke');
  return (
    <li className="row">
      <span className="wrap-anywhere">
        {i.email} ({i.role}), until {formatDateTime(i.expiresAt)}
      </span>
      <button
        type="button"
        className="secondary"
        data-row-action="Revoke"
        disabled={revoking}
        onClick={(e) => {
          arm(e.currentTarget);
          onRevoke();
        }}
        aria-label={`Revoke the invite of ${i.email}`}
      >
        Revoke
      </button>
    </li>
  );
}
