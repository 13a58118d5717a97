import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, type ReactNode } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { api, errorMessage, onSessionEnded, unwrap } from '../api/client';
import type { components } from '../api/schema';

export type Me = components['schemas']['Me'];
export type ProjectRole = 'admin' | 'agent' | 'viewer';
/** What a user may do on a project: the owner of the instance counts as an admin everywhere. */
export type EffectiveRole = 'owner' | ProjectRole;

export const ME_KEY = ['auth', 'me'] as const;

/** GET /api/v1/auth/me: the signed-in user, or null when there is no session (401). */
export async function fetchMe(): Promise<Me | null> {
  const result = await api.GET('/api/v1/auth/me');
  if (result.response.status === 401) return null;
  return unwrap(result);
}

const MeContext = createContext<Me | null>(null);

/** The signed-in user; only inside <RequireSession>. */
export function useMe(): Me {
  const me = useContext(MeContext);
  if (!me) throw new Error('useMe outside a session');
  return me;
}

/** The caller's role on a project (null: none). */
export function roleOn(me: Me, projectId: string | undefined): EffectiveRole | null {
  if (me.user.role === 'owner') return 'owner';
  return (me.memberships.find((m) => m.projectId === projectId)?.role as ProjectRole | undefined) ?? null;
}

export interface Permissions {
  role: EffectiveRole | null;
  /** Change the project's configuration (knowledge, actions, skills, widget, keys, settings). */
  configure: boolean;
  /** Work conversations (close, reply). */
  work: boolean;
  /** The instance owner: users, invites, creating and deleting projects. */
  owner: boolean;
}

export function permissionsOf(me: Me, projectId: string | undefined): Permissions {
  const role = roleOn(me, projectId);
  return {
    role,
    configure: role === 'owner' || role === 'admin',
    work: role === 'owner' || role === 'admin' || role === 'agent',
    owner: me.user.role === 'owner',
  };
}

/**
 * Renders its children only with a session; without one it sends the visitor to the login page
 * (remembering where they were going). A 401 from any later call ends the session here as well.
 */
/**
 * What a page does once the server has set the session cookie (sign-in, first-run setup, an
 * accepted invite): forget what another user's session cached, read who is signed in, go to `to`.
 */
export function useSignedIn(): (to?: string) => Promise<void> {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  return async (to = '/') => {
    queryClient.clear();
    queryClient.setQueryData(ME_KEY, await fetchMe());
    navigate(to, { replace: true });
  };
}

export function RequireSession({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const location = useLocation();
  const me = useQuery({ queryKey: ME_KEY, queryFn: fetchMe, staleTime: 60_000 });
  useEffect(() => onSessionEnded(() => queryClient.setQueryData(ME_KEY, null)), [queryClient]);
  if (me.isPending) return <p className="content" role="status">Loading…</p>;
  if (me.isError) return <p className="content form-error" role="alert">Could not check your session: {errorMessage(me.error)}</p>;
  if (!me.data) {
    const next = location.pathname + location.search;
    return <Navigate to={`/login${next && next !== '/' ? `?next=${encodeURIComponent(next)}` : ''}`} replace />;
  }
  return <MeContext.Provider value={me.data}>{children}</MeContext.Provider>;
}
