import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { Field, QueryError } from '../ui';

/**
 * What the search can find: each source with the time its searchable content was last completed.
 * It changes when a source is deleted, or added or re-synced and then indexed, and nothing else
 * does (progress while a source is read leaves it alone).
 */
export function searchableVersion(sources: ReadonlyArray<{ id: string; syncedAt: string | null }> | undefined): string {
  return (sources ?? [])
    .map((s) => `${s.id}@${s.syncedAt ?? ''}`)
    .sort()
    .join(' ');
}

/**
 * "What would the agent find?": runs the same knowledge search the agent's search_knowledge tool
 * runs and shows each passage with its score, where it comes from and its text. `searchable` is
 * the sources' searchableVersion: part of the query's key, so a change to the knowledge searches
 * again and never shows passages of a deleted source.
 */
export function SearchPreview({ projectId, searchable }: { projectId: string; searchable: string }) {
  const [draft, setDraft] = useState('');
  const [q, setQ] = useState('');
  const results = useQuery({
    queryKey: ['projects', projectId, 'knowledge-search', searchable, q],
    enabled: q.length > 0,
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/admin/projects/{projectId}/knowledge/search', { params: { path: { projectId }, query: { q, limit: 5 } } })).results,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const next = draft.trim();
    // Asking the same question again searches again.
    if (next === q) void results.refetch();
    else setQ(next);
  };
  return (
    <section aria-labelledby="search-heading" className="card">
      <h2 id="search-heading">Search preview</h2>
      <p className="muted">Ask a question as a customer would: these are the passages the agent would retrieve, best first.</p>
      <form className="row search-row" onSubmit={submit} role="search" aria-label="Knowledge search">
        <Field label="Question">
          {(p) => <input {...p} type="search" value={draft} onChange={(e) => setDraft(e.target.value)} maxLength={1000} />}
        </Field>
        <button type="submit" disabled={!draft.trim()}>
          Search
        </button>
      </form>
      {results.isFetching ? (
        <p role="status" className="muted">
          Searching…
        </p>
      ) : null}
      {results.isError ? <QueryError error={results.error} /> : null}
      {results.data && !results.isFetching ? (
        results.data.length === 0 ? (
          <p role="status">Nothing found for “{q}”: the agent would say it does not know.</p>
        ) : (
          <ol className="hits" aria-label={`Passages found for “${q}”`}>
            {results.data.map((hit) => (
              <li key={hit.chunkId} className="hit">
                <div className="hit-head">
                  <span className="badge" title="Relevance score (higher is better, comparable within this list)">
                    score {hit.score.toFixed(3)}
                  </span>{' '}
                  <strong>{hit.title}</strong>
                  {hit.headingPath.length ? <span className="muted"> › {hit.headingPath.join(' › ')}</span> : null}
                </div>
                <div className="muted small">
                  {hit.source.type} source{hit.source.title ? ` “${hit.source.title}”` : ''}
                  {hit.url ? (
                    <>
                      {' · '}
                      <a href={hit.url} target="_blank" rel="noreferrer noopener">
                        {hit.url}
                      </a>
                    </>
                  ) : null}
                </div>
                <blockquote className="chunk-text">{hit.text}</blockquote>
              </li>
            ))}
          </ol>
        )
      ) : null}
    </section>
  );
}
