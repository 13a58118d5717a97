import { Link, Navigate } from 'react-router';
import { Loading, PageHeader, QueryError } from '../components/ui';
import { useMe } from '../lib/auth';
import { lastProject, useProjects } from '../lib/project';

/** /dashboard: the last project used (or the first), or how to get one. */
export function Home() {
  const me = useMe();
  const projects = useProjects();
  if (projects.isPending) return <Loading />;
  if (projects.isError) return <QueryError error={projects.error} />;
  const list = projects.data;
  const last = lastProject();
  const target = list.find((p) => p.id === last) ?? list[0];
  if (target) return <Navigate to={`/p/${target.id}/conversations`} replace />;
  return (
    <>
      <PageHeader title="Welcome" description="There is no project yet." />
      {me.user.role === 'owner' ? (
        <p>
          <Link to="/projects/new" className="button">
            Create a project
          </Link>
        </p>
      ) : (
        <p>You are not a member of any project yet: ask an owner to add you to one.</p>
      )}
    </>
  );
}

export function NotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        <Link to="/">Go to the dashboard</Link>
      </p>
    </>
  );
}
