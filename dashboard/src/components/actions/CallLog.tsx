import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { StatusBadge } from '../kit/kit';
import { formatDateTime, QueryStatus } from '../ui';

type Action = components['schemas']['Action'];

export const callsKey = (projectId: string, actionId: string) => ['projects', projectId, 'actions', actionId, 'calls'] as const;

/** The action's call log, newest first: by the agent (with its conversation) and by test runs. */
export function CallLog({ projectId, action }: { projectId: string; action: Action }) {
  const calls = useInfiniteQuery({
    queryKey: callsKey(projectId, action.id),
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      unwrap(
        await api.GET('/api/v1/admin/projects/{projectId}/actions/{actionId}/calls', {
          params: { path: { projectId, actionId: action.id }, query: { limit: 20, ...(pageParam ? { cursor: pageParam } : {}) } },
        }),
      ),
    getNextPageParam: (last) => last.nextCursor,
  });
  const rows = calls.data?.pages.flatMap((p) => p.calls) ?? [];
  return (
    <section className="card" aria-labelledby="call-log-heading">
      <div className="row spread">
        <h2 id="call-log-heading">Call log</h2>
        <button type="button" className="secondary" onClick={() => calls.refetch()} disabled={calls.isFetching}>
          Refresh
        </button>
      </div>
      <QueryStatus query={calls} isEmpty={!!calls.data && rows.length === 0} empty="No calls yet." />
      {rows.length ? (
        <div className="table-wrap">
          <table aria-label={`Calls of ${action.name}`}>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">By</th>
                <th scope="col">Outcome</th>
                <th scope="col">Status</th>
                <th scope="col">Time</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.id} data-call-id={c.id}>
                  <td>{formatDateTime(c.createdAt)}</td>
                  <td>
                    {c.source === 'test' ? (
                      'test'
                    ) : c.conversationId ? (
                      <Link to={`/p/${projectId}/conversations/${c.conversationId}`}>agent</Link>
                    ) : (
                      'agent'
                    )}
                  </td>
                  <td>
                    <StatusBadge tone={c.outcome === 'ok' ? 'ok' : 'bad'}>{c.outcome}</StatusBadge>
                  </td>
                  <td>{c.status ?? '—'}</td>
                  <td>{c.latencyMs} ms</td>
                  <td>{c.error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {calls.hasNextPage ? (
        <button type="button" className="secondary" onClick={() => calls.fetchNextPage()} disabled={calls.isFetchingNextPage}>
          Load more calls
        </button>
      ) : null}
    </section>
  );
}
