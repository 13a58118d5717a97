import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { NavLink, Outlet, useLocation, useNavigate, useParams } from 'react-router';
import { api } from '../api/client';
import { ME_KEY, useMe } from '../lib/auth';
import { lastProject, rememberProject, useProjects } from '../lib/project';
import { focusPageTitle } from './ui';

/** The project pages, in the navigation's order; the link names are fixed by issue 12. */
export const PROJECT_PAGES = [
  { path: 'conversations', name: 'Conversations' },
  { path: 'knowledge', name: 'Knowledge' },
  { path: 'evals', name: 'Evals' },
  { path: 'actions', name: 'Actions' },
  { path: 'skills', name: 'Skills' },
  { path: 'widget', name: 'Widget' },
  { path: 'analytics', name: 'Analytics' },
  { path: 'activity', name: 'Activity' },
  { path: 'settings', name: 'Settings' },
] as const;

/** The frame of every signed-in page: top bar (project switcher, user, sign out), navigation, content. */
export function Shell() {
  const me = useMe();
  const { projectId } = useParams();
  const projects = useProjects();
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();
  const current = projectId ?? lastProject() ?? projects.data?.[0]?.id;
  const currentKnown = projects.data?.some((p) => p.id === current) ? current : projects.data?.[0]?.id;

  useEffect(() => {
    if (projectId) rememberProject(projectId);
  }, [projectId]);

  // Another page (a link, the project switcher, Back or Forward): the focus goes to its title, as a
  // page load would start there, rather than staying on a link of the page that has gone or on the
  // body. A change of the address's query only (filters, a period) is the same page: focus stays.
  const shownPath = useRef(location.pathname);
  useEffect(() => {
    if (shownPath.current === location.pathname) return;
    shownPath.current = location.pathname;
    focusPageTitle();
  }, [location.pathname]);

  const switchProject = (next: string) => {
    // Stay on the same kind of page in the other project.
    const page = PROJECT_PAGES.find((p) => location.pathname.split('/')[3] === p.path)?.path ?? 'conversations';
    navigate(`/p/${next}/${page}`);
  };

  const signOut = async () => {
    await api.POST('/api/v1/auth/logout');
    queryClient.clear();
    queryClient.setQueryData(ME_KEY, null);
    navigate('/login');
  };

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <NavLink to="/" className="brand" end>
          AnswerDesk
        </NavLink>
        {projects.data && projects.data.length > 0 ? (
          <label>
            Project
            <select value={currentKnown ?? ''} onChange={(e) => switchProject(e.target.value)}>
              {projects.data.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {me.user.role === 'owner' ? (
          <NavLink to="/projects/new" className="button secondary">
            New project
          </NavLink>
        ) : null}
        <div className="user-menu">
          <span>
            {me.user.name} <span className="muted">({me.user.role === 'owner' ? 'owner' : (me.memberships.find((m) => m.projectId === currentKnown)?.role ?? 'member')})</span>
          </span>
          <button type="button" className="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav className="sidenav" aria-label="Main">
        <ul>
          {currentKnown
            ? PROJECT_PAGES.map((page) => (
                <li key={page.path}>
                  <NavLink to={`/p/${currentKnown}/${page.path}`}>{page.name}</NavLink>
                </li>
              ))
            : null}
          {me.user.role === 'owner' ? (
            <li>
              <NavLink to="/users">Users</NavLink>
            </li>
          ) : null}
        </ul>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        {/* Another project starts its pages afresh: a draft, a "Saved." or an open editor of one
            project must not show (or be sent) in the other. */}
        <Outlet key={projectId ?? ''} />
      </main>
    </div>
  );
}
