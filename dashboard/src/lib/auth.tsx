import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { api, errorMessage, onSessionEnded, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { FormError } from '../components/ui';

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

/** The session's query: who is signed in, read again at most once a minute. */
export const meQuery = queryOptions({ queryKey: ME_KEY, queryFn: fetchMe, staleTime: 60_000 });

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

/**
 * Renders its children only with a session; without one it sends the visitor to the login page
 * (remembering where they were going). A session that ends while the dashboard is open (a 401 from
 * any call: expiry, a sign-out elsewhere) keeps the page as it is, with what was typed in its forms,
 * under a dialog that signs in again; the same user then carries on where they were.
 */
export function RequireSession({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const location = useLocation();
  const me = useQuery(meQuery);
  // The user whose session ended while their page was open (not one who signed out).
  const [ended, setEnded] = useState<Me | null>(null);
  useEffect(
    () =>
      onSessionEnded(() => {
        const was = queryClient.getQueryData<Me | null>(ME_KEY);
        if (was) setEnded(was);
        queryClient.setQueryData(ME_KEY, null);
      }),
    [queryClient],
  );
  if (me.data && ended) setEnded(null);
  if (me.isPending) return <p className="content" role="status">Loading…</p>;
  if (me.isError) return <p className="content form-error" role="alert">Could not check your session: {errorMessage(me.error)}</p>;
  const shown = me.data ?? ended;
  if (!shown) {
    const next = location.pathname + location.search;
    return <Navigate to={`/login${next && next !== '/' ? `?next=${encodeURIComponent(next)}` : ''}`} replace />;
  }
  return (
    <MeContext.Provider value={shown}>
      {children}
      {me.data ? null : <SignInAgain me={shown} />}
    </MeContext.Provider>
  );
}

/**
 * Signs in again over the page whose session ended: a modal dialog, so the page behind it stays as
 * it was (and cannot be used meanwhile). The same user carries on, every read done again; another
 * user starts afresh at the home page, with nothing of the first one's kept.
 */
function SignInAgain({ me }: { me: Me }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const dialog = useRef<HTMLDialogElement>(null);
  const [email, setEmail] = useState(me.user.email);
  const [password, setPassword] = useState('');
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
  }, []);
  const login = useMutation({
    mutationFn: async () => {
      unwrap(await api.POST('/api/v1/auth/login', { body: { email, password } }));
      return fetchMe();
    },
    onSuccess: async (now) => {
      if (now && now.user.id === me.user.id) {
        queryClient.setQueryData(ME_KEY, now);
        await queryClient.invalidateQueries({ predicate: (q) => q.queryKey !== ME_KEY });
        return;
      }
      queryClient.clear();
      queryClient.setQueryData(ME_KEY, now);
      navigate('/', { replace: true });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    login.mutate();
  };
  return (
    // Escape does not close it: the page behind cannot be used without a session.
    <dialog ref={dialog} className="card session-dialog" aria-labelledby="session-ended-title" onCancel={(e) => e.preventDefault()}>
      <h2 id="session-ended-title">Your session has ended</h2>
      <p>Sign in again to go on. This page stays as it was, with anything you typed.</p>
      <form className="stack" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="again-email">Email</label>
          <input id="again-email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="again-password">Password</label>
          <input id="again-password" type="password" autoComplete="current-password" required autoFocus value={password} onChange={(e) => setPassword(e.target.value)} aria-invalid={login.isError || undefined} />
        </div>
        <FormError error={login.error} />
        <button type="submit" disabled={login.isPending}>
          Sign in again
        </button>
      </form>
    </dialog>
  );
}
