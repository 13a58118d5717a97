import { Link, useLocation } from 'react-router';

/** The two views of Knowledge: its sources, and the questions they do not answer yet. */
export function KnowledgeTabs({ projectId }: { projectId: string }) {
  const { pathname } = useLocation();
  const onGaps = pathname.endsWith('/knowledge/gaps');
  return (
    <nav className="view-tabs" aria-label="Knowledge views">
      <Link to={`/p/${projectId}/knowledge`} aria-current={onGaps ? undefined : 'page'}>
        Sources
      </Link>
      <Link to={`/p/${projectId}/knowledge/gaps`} aria-current={onGaps ? 'page' : undefined}>
        Gaps
      </Link>
    </nav>
  );
}
