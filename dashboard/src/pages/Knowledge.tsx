import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { AddSource } from '../components/knowledge/AddSource';
import { KnowledgeTabs } from '../components/knowledge/KnowledgeTabs';
import { SearchPreview, searchableVersion } from '../components/knowledge/SearchPreview';
import { ConfirmButton, StatusBadge } from '../components/kit/kit';
import '../components/kit/pages.css';
import { formatDateTime, FormError, PageHeader, QueryStatus, ReadOnlyNote } from '../components/ui';
import { usePermissions, useProjectId } from '../lib/project';

export type KnowledgeSource = components['schemas']['KnowledgeSource'];

export const sourcesKey = (projectId: string) => ['projects', projectId, 'knowledge'] as const;

/** How often the list is read again while a source is being ingested. */
const PROGRESS_POLL_MS = 1000;

const TYPE_NAMES: Record<KnowledgeSource['type'], string> = {
  text: 'Text',
  markdown: 'Markdown',
  html: 'HTML',
  pdf: 'PDF',
  url: 'URL',
  sitemap: 'Sitemap',
  faq: 'FAQ',
};

function inProgress(s: KnowledgeSource): boolean {
  return s.status === 'pending' || s.status === 'processing';
}

/** Knowledge: the sources the agent answers from, their ingestion, adding more, and what a question retrieves. */
export function Knowledge() {
  const projectId = useProjectId();
  const perms = usePermissions();
  const queryClient = useQueryClient();
  const sources = useQuery({
    queryKey: sourcesKey(projectId),
    queryFn: async () => unwrap(await api.GET('/api/v1/admin/projects/{projectId}/knowledge', { params: { path: { projectId } } })).sources,
    // Live progress: poll while anything is queued or being read, stop when all are settled.
    refetchInterval: (query) => (query.state.data?.some(inProgress) ? PROGRESS_POLL_MS : false),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: sourcesKey(projectId) });

  const sync = useMutation({
    mutationFn: async (sourceId: string) =>
      unwrap(await api.POST('/api/v1/admin/projects/{projectId}/knowledge/{sourceId}/sync', { params: { path: { projectId, sourceId } } })),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: async (sourceId: string) =>
      unwrap(await api.DELETE('/api/v1/admin/projects/{projectId}/knowledge/{sourceId}', { params: { path: { projectId, sourceId } } })),
    onSettled: refresh,
  });

  return (
    <>
      <PageHeader title="Knowledge" description="What the agent answers from: pages, documents and FAQs, searched for every question." />
      <KnowledgeTabs projectId={projectId} />
      <ReadOnlyNote show={!perms.configure} />
      <section aria-labelledby="sources-heading">
        <h2 id="sources-heading">Sources</h2>
        <QueryStatus query={sources} isEmpty={!!sources.data && sources.data.length === 0} empty="No sources yet: add the first one below." />
        {sources.data && sources.data.length > 0 ? (
          <div className="table-wrap">
            <table>
              <caption className="sr-only">Knowledge sources</caption>
              <thead>
                <tr>
                  <th scope="col">Source</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Chunks</th>
                  <th scope="col">Synced</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {sources.data.map((s) => (
                  <tr key={s.id} data-source-id={s.id}>
                    <td>
                      <strong>{s.title ?? s.url ?? s.id}</strong>
                      {s.url && s.title ? (
                        <div className="muted small-break">
                          <a href={s.url} target="_blank" rel="noreferrer noopener">
                            {s.url}
                          </a>
                        </div>
                      ) : null}
                      {s.error ? <div className="field-error">{s.error}</div> : null}
                    </td>
                    <td>{TYPE_NAMES[s.type]}</td>
                    <td>
                      <SourceStatus source={s} />
                    </td>
                    <td>{s.chunkCount}</td>
                    <td>{formatDateTime(s.syncedAt)}</td>
                    <td>
                      <div className="row">
                        {s.type === 'url' || s.type === 'sitemap' ? (
                          <button
                            type="button"
                            className="secondary"
                            disabled={!perms.configure || inProgress(s) || (sync.isPending && sync.variables === s.id)}
                            onClick={() => sync.mutate(s.id)}
                            aria-label={`Re-sync ${s.title ?? s.url ?? s.id}`}
                          >
                            Re-sync
                          </button>
                        ) : null}
                        <ConfirmButton
                          label="Delete"
                          confirmLabel={`Delete ${s.title ?? s.url ?? 'source'}`}
                          disabled={!perms.configure}
                          busy={remove.isPending && remove.variables === s.id}
                          onConfirm={() => remove.mutate(s.id)}
                        />
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <FormError error={sync.error ?? remove.error} />
      </section>
      <AddSource projectId={projectId} canConfigure={perms.configure} onAdded={refresh} />
      <SearchPreview projectId={projectId} searchable={searchableVersion(sources.data)} />
    </>
  );
}

function SourceStatus({ source: s }: { source: KnowledgeSource }) {
  const tone = s.status === 'ready' ? 'ok' : s.status === 'failed' ? 'bad' : 'neutral';
  const { pagesDone, pagesTotal, chunksDone } = s.progress;
  const pages = pagesTotal !== null ? `${pagesDone} of ${pagesTotal} pages` : `${pagesDone} pages`;
  return (
    <div className="stack-tight" data-status={s.status}>
      <StatusBadge tone={tone}>{s.status}</StatusBadge>
      {inProgress(s) ? (
        <>
          {pagesTotal ? <progress max={pagesTotal} value={pagesDone} aria-label={`Progress of ${s.title ?? s.url ?? s.id}`} /> : null}
          <span className="muted" role="status">
            {pages}, {chunksDone} chunks
          </span>
        </>
      ) : null}
    </div>
  );
}
