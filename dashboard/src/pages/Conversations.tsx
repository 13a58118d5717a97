import { useInfiniteQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { Transcript } from '../components/conversations/Transcript';
import { StatusBadge } from '../components/kit/kit';
import '../components/kit/pages.css';
import { Field, formatDateTime, PageHeader, QueryStatus } from '../components/ui';
import { LiveNote } from '../components/conversations/LiveNote';
import { useProjectEvents, type LiveState } from '../lib/live';
import { useProjectId } from '../lib/project';

type Status = 'ACTIVE' | 'CLOSED';
type FeedbackFilter = 'positive' | 'negative' | 'any' | 'none';
/** The inbox views: handed off and waiting for a person, or with one. */
type HandoffView = 'requested' | 'active';

export interface ConversationFilters {
  status?: Status;
  from?: string;
  to?: string;
  user?: string;
  feedback?: FeedbackFilter;
  handoff?: HandoffView;
}

export const conversationsKey = (projectId: string) => ['projects', projectId, 'conversations'] as const;

/** A yyyy-mm-dd day as the UTC instant it starts at; `to` is inclusive, so its end is the next day. */
function dayStart(day: string, plusDays = 0): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + plusDays);
  return d.toISOString();
}

function filtersOf(params: URLSearchParams): ConversationFilters {
  const status = params.get('status');
  const feedback = params.get('feedback');
  const handoff = params.get('handoff');
  return {
    status: status === 'ACTIVE' || status === 'CLOSED' ? status : undefined,
    from: params.get('from') || undefined,
    to: params.get('to') || undefined,
    user: params.get('user') || undefined,
    feedback: feedback === 'positive' || feedback === 'negative' || feedback === 'any' || feedback === 'none' ? feedback : undefined,
    handoff: handoff === 'requested' || handoff === 'active' ? handoff : undefined,
  };
}

/** What the filter form edits (every filter but the view), as one comparable string. */
function formFiltersKey({ status, from, to, user, feedback }: ConversationFilters): string {
  return JSON.stringify([status, from, to, user, feedback]);
}

/**
 * Conversations: the list with its filters (kept in the URL) and the inbox views, or one
 * conversation's transcript. Both follow the project's live events, so they update without a reload.
 */
export function Conversations() {
  const { conversationId } = useParams();
  const live = useProjectEvents(useProjectId());
  if (conversationId) return <Transcript conversationId={conversationId} live={live} />;
  return <ConversationList live={live} />;
}

const VIEWS: Array<{ view: HandoffView | undefined; label: string }> = [
  { view: undefined, label: 'Every conversation' },
  { view: 'requested', label: 'Waiting for a person' },
  { view: 'active', label: 'With a person' },
];

function ConversationList({ live }: { live: LiveState }) {
  const projectId = useProjectId();
  const [params, setParams] = useSearchParams();
  const filters = filtersOf(params);
  const [draft, setDraft] = useState<ConversationFilters>(filters);
  // The form shows the filters in the address whenever they change there (Apply, Clear, Back,
  // Forward, a link): set during render rather than by remounting, so focus stays where it was.
  // A view tab changes only `handoff`, which is not in the form, so it keeps a draft not yet applied.
  const applied = formFiltersKey(filters);
  const [draftOf, setDraftOf] = useState(applied);
  if (draftOf !== applied) {
    setDraftOf(applied);
    setDraft(filters);
  }

  const list = useInfiniteQuery({
    queryKey: [...conversationsKey(projectId), filters],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      unwrap(
        await api.GET('/api/v1/admin/projects/{projectId}/conversations', {
          params: {
            path: { projectId },
            query: {
              limit: 25,
              ...(filters.status ? { status: filters.status } : {}),
              ...(filters.user ? { userId: filters.user } : {}),
              ...(filters.from ? { from: dayStart(filters.from) } : {}),
              ...(filters.to ? { to: dayStart(filters.to, 1) } : {}),
              ...(filters.feedback ? { feedback: filters.feedback } : {}),
              ...(filters.handoff ? { handoff: filters.handoff } : {}),
              ...(pageParam ? { cursor: pageParam } : {}),
            },
          },
        }),
      ),
    getNextPageParam: (last) => last.nextCursor,
  });

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...draft, handoff: filters.handoff })) if (v) next.set(k, String(v).trim());
    setParams(next);
  };
  const clear = () => {
    // Also when nothing was applied: the address is then unchanged and would not reset the form.
    setDraft({});
    setParams(new URLSearchParams(filters.handoff ? { handoff: filters.handoff } : {}));
  };
  /** A view keeps the other filters. */
  const viewHref = (view: HandoffView | undefined) => {
    const next = new URLSearchParams(params);
    if (view) next.set('handoff', view);
    else next.delete('handoff');
    const q = next.toString();
    return `/p/${projectId}/conversations${q ? `?${q}` : ''}`;
  };
  const rows = list.data?.pages.flatMap((p) => p.conversations) ?? [];
  const badDates = draft.from && draft.to && draft.to < draft.from ? 'The end date is before the start date.' : undefined;

  return (
    <>
      <PageHeader title="Conversations" description="What your customers asked and what the agent answered." />
      <nav className="view-tabs" aria-label="Inbox">
        {VIEWS.map(({ view, label }) => (
          <Link key={label} to={viewHref(view)} aria-current={filters.handoff === view ? 'page' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      <LiveNote live={live} />
      <form className="card filters" onSubmit={apply} aria-label="Filter conversations">
        <Field label="Status">
          {(p) => (
            <select {...p} value={draft.status ?? ''} onChange={(e) => setDraft({ ...draft, status: (e.target.value || undefined) as Status | undefined })}>
              <option value="">All</option>
              <option value="ACTIVE">Active</option>
              <option value="CLOSED">Closed</option>
            </select>
          )}
        </Field>
        <Field label="Started from">
          {(p) => <input {...p} type="date" value={draft.from ?? ''} onChange={(e) => setDraft({ ...draft, from: e.target.value || undefined })} />}
        </Field>
        <Field label="Started until" error={badDates}>
          {(p) => <input {...p} type="date" value={draft.to ?? ''} onChange={(e) => setDraft({ ...draft, to: e.target.value || undefined })} />}
        </Field>
        <Field label="End user" hint="Your id of the user.">
          {(p) => <input {...p} type="text" value={draft.user ?? ''} onChange={(e) => setDraft({ ...draft, user: e.target.value || undefined })} />}
        </Field>
        <Field label="Feedback">
          {(p) => (
            <select {...p} value={draft.feedback ?? ''} onChange={(e) => setDraft({ ...draft, feedback: (e.target.value || undefined) as FeedbackFilter | undefined })}>
              <option value="">Any or none</option>
              <option value="positive">Rated positive</option>
              <option value="negative">Rated negative</option>
              <option value="any">Rated</option>
              <option value="none">Not rated</option>
            </select>
          )}
        </Field>
        <div className="row filter-buttons">
          <button type="submit" disabled={!!badDates}>
            Apply filters
          </button>
          <button type="button" className="secondary" onClick={clear}>
            Clear
          </button>
        </div>
      </form>
      <QueryStatus query={list} />
      {list.data && rows.length === 0 ? (
        <p role="status" className="muted">
          {filters.handoff === 'requested' ? 'Nobody is waiting for a person.' : filters.handoff === 'active' ? 'No conversation is with a person.' : 'No conversations match.'}
        </p>
      ) : null}
      {rows.length ? (
        <ul className="conversation-list" aria-label="Conversations">
          {rows.map((c) => (
            <li key={c.id} data-conversation-id={c.id}>
              <Link to={`/p/${projectId}/conversations/${c.id}`} className="conversation-link">
                <span className="conversation-who">{c.endUser ? (c.endUser.name ?? c.endUser.email ?? c.endUser.externalId) : 'Anonymous visitor'}</span>
                <span className="conversation-preview">{c.lastMessagePreview ?? '(no messages)'}</span>
              </Link>
              <span className="meta">
                <StatusBadge tone={c.status === 'ACTIVE' ? 'ok' : 'neutral'}>{c.status === 'ACTIVE' ? 'active' : 'closed'}</StatusBadge>
                {c.handoff?.status === 'requested' ? <StatusBadge tone="bad">waiting for a person</StatusBadge> : null}
                {c.handoff?.status === 'active' ? <StatusBadge tone="neutral">with {c.handoff.assignee.name}</StatusBadge> : null}
                {c.handoff?.reason ? <span>“{c.handoff.reason}”</span> : null}
                <span>{c.messageCount} messages</span>
                <span>updated {formatDateTime(c.updatedAt)}</span>
                {c.endUser ? <span>user {c.endUser.externalId}</span> : null}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
      {list.hasNextPage ? (
        <button type="button" className="secondary" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          Load more
        </button>
      ) : null}
    </>
  );
}
