import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { usePermissions, useProjectId } from '../../lib/project';
import { prettyJson, StatusBadge } from '../kit/kit';
import { formatDateTime, FormError, Loading, PageHeader, QueryError } from '../ui';

type Detail = components['schemas']['AdminConversationDetail'];
type Message = Detail['messages'][number];
type Feedback = Detail['feedback'][number];

const detailKey = (projectId: string, conversationId: string) => ['projects', projectId, 'conversations', 'one', conversationId] as const;

/** A tool call as the stored AI SDK UI parts hold it (`tool-<name>` or `dynamic-tool`). */
interface ToolPart {
  name: string;
  state: string;
  input: unknown;
  output: unknown;
  errorText: string | undefined;
}

function toolParts(message: Message): ToolPart[] {
  const out: ToolPart[] = [];
  for (const part of message.parts ?? []) {
    const type = typeof part.type === 'string' ? part.type : '';
    if (!type.startsWith('tool-') && type !== 'dynamic-tool') continue;
    out.push({
      name: type === 'dynamic-tool' ? String(part.toolName ?? 'tool') : type.slice('tool-'.length),
      state: String(part.state ?? ''),
      input: part.input,
      output: part.output,
      errorText: typeof part.errorText === 'string' ? part.errorText : undefined,
    });
  }
  return out;
}

/** One conversation as the end user saw it, with what the agent looked up, the ratings, and Close. */
export function Transcript({ conversationId }: { conversationId: string }) {
  const projectId = useProjectId();
  const perms = usePermissions();
  const queryClient = useQueryClient();
  const detail = useQuery({
    queryKey: detailKey(projectId, conversationId),
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/admin/projects/{projectId}/conversations/{conversationId}', { params: { path: { projectId, conversationId } } })),
  });
  const close = useMutation({
    mutationFn: async () =>
      unwrap(await api.POST('/api/v1/admin/projects/{projectId}/conversations/{conversationId}/close', { params: { path: { projectId, conversationId } } })),
    onSuccess: ({ conversation }) => {
      queryClient.setQueryData<Detail>(detailKey(projectId, conversationId), (d) => (d ? { ...d, conversation } : d));
      void queryClient.invalidateQueries({ queryKey: ['projects', projectId, 'conversations'] });
    },
  });

  const back = (
    <p>
      <Link to={`/p/${projectId}/conversations`}>← All conversations</Link>
    </p>
  );
  if (detail.isPending)
    return (
      <>
        {back}
        <Loading />
      </>
    );
  if (detail.isError)
    return (
      <>
        {back}
        <PageHeader title="Conversation" />
        <QueryError error={detail.error} />
      </>
    );
  const { conversation: c, messages, feedback } = detail.data;
  const who = c.endUser ? (c.endUser.name ?? c.endUser.email ?? c.endUser.externalId) : 'an anonymous visitor';
  const general = feedback.filter((f) => !f.messageId);
  const byMessage = new Map<string, Feedback[]>();
  for (const f of feedback) if (f.messageId) byMessage.set(f.messageId, [...(byMessage.get(f.messageId) ?? []), f]);

  return (
    <>
      {back}
      <PageHeader title={`Conversation with ${who}`}>
        {c.status === 'ACTIVE' ? (
          <button type="button" onClick={() => close.mutate()} disabled={!perms.work || close.isPending}>
            Close conversation
          </button>
        ) : null}
      </PageHeader>
      <FormError error={close.error} />
      <dl className="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge tone={c.status === 'ACTIVE' ? 'ok' : 'neutral'}>{c.status === 'ACTIVE' ? 'active' : 'closed'}</StatusBadge>
            {c.closedAt ? <span className="muted"> closed {formatDateTime(c.closedAt)}</span> : null}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{formatDateTime(c.createdAt)}</dd>
        </div>
        <div>
          <dt>Last message</dt>
          <dd>{formatDateTime(c.updatedAt)}</dd>
        </div>
        <div>
          <dt>End user</dt>
          <dd>
            {c.endUser ? (
              <>
                {c.endUser.externalId}
                {c.endUser.email ? ` · ${c.endUser.email}` : ''} {c.endUser.verified ? <StatusBadge tone="ok">verified</StatusBadge> : <StatusBadge tone="neutral">unverified</StatusBadge>}
              </>
            ) : (
              'anonymous'
            )}
          </dd>
        </div>
      </dl>
      {general.length ? (
        <section aria-label="Feedback on the conversation" className="card">
          <h2>Feedback on the conversation</h2>
          <FeedbackList items={general} />
        </section>
      ) : null}
      <h2>Transcript</h2>
      {messages.length === 0 ? <p className="muted">No messages: the widget was opened but nothing was written.</p> : null}
      <ol className="transcript" aria-label="Transcript">
        {messages.map((m) => (
          <MessageItem key={m.id} message={m} feedback={byMessage.get(m.id) ?? []} />
        ))}
      </ol>
    </>
  );
}

function MessageItem({ message: m, feedback }: { message: Message; feedback: Feedback[] }) {
  const tools = toolParts(m);
  const label = m.role === 'user' ? 'Customer' : 'Agent';
  return (
    <li className={`msg ${m.role}${m.supersededBy ? ' superseded' : ''}`} data-message-id={m.id} data-role={m.role}>
      <div className="msg-head">
        <strong>{label}</strong> <span className="muted">{formatDateTime(m.createdAt)}</span>
        {m.model ? <span className="muted"> · {m.model}</span> : null}
        {m.status === 'error' ? <StatusBadge tone="bad">answer failed</StatusBadge> : null}
        {m.status === 'streaming' ? <StatusBadge tone="neutral">being written</StatusBadge> : null}
        {m.supersededBy ? <StatusBadge tone="neutral">replaced by a regenerated answer</StatusBadge> : null}
      </div>
      {tools.length ? (
        <div className="tool-calls">
          {tools.map((t, i) => (
            <details key={i} className="tool-call">
              <summary>
                Looked up with <code>{t.name}</code>{' '}
                {t.errorText !== undefined || t.state === 'output-error' ? <StatusBadge tone="bad">error</StatusBadge> : <StatusBadge tone="ok">done</StatusBadge>}
              </summary>
              <div className="tool-io">
                <span className="label">Input</span>
                {/* Focusable: a long output scrolls inside its box, which keyboard users must reach too. */}
                <pre tabIndex={0} aria-label={`${t.name} input`}>
                  {prettyJson(t.input)}
                </pre>
                <span className="label">{t.errorText !== undefined ? 'Error' : 'Output'}</span>
                <pre tabIndex={0} aria-label={`${t.name} ${t.errorText !== undefined ? 'error' : 'output'}`}>
                  {t.errorText ?? prettyJson(t.output)}
                </pre>
              </div>
            </details>
          ))}
        </div>
      ) : null}
      <div className="bubble">{m.role === 'assistant' ? <Markdown text={m.content} /> : <p className="plain">{m.content}</p>}</div>
      {m.sources?.length ? (
        <div className="msg-sources">
          <span className="label">Sources</span>
          <ol>
            {m.sources.map((s, i) => (
              <li key={s.sourceId ?? i}>
                {s.url && /^https?:\/\//i.test(s.url) ? (
                  <a href={s.url} target="_blank" rel="noreferrer noopener">
                    {s.title ?? s.url}
                  </a>
                ) : (
                  (s.title ?? 'Document')
                )}
              </li>
            ))}
          </ol>
        </div>
      ) : null}
      {feedback.length ? <FeedbackList items={feedback} /> : null}
    </li>
  );
}

function FeedbackList({ items }: { items: Feedback[] }) {
  return (
    <ul className="feedback-list">
      {items.map((f) => (
        <li key={f.id} data-rating={f.rating}>
          <StatusBadge tone={f.rating === 'POSITIVE' ? 'ok' : 'bad'}>{f.rating === 'POSITIVE' ? 'Rated helpful' : 'Rated not helpful'}</StatusBadge>
          {f.comment ? <q className="feedback-comment">{f.comment}</q> : null} <span className="muted small">{formatDateTime(f.createdAt)}</span>
        </li>
      ))}
    </ul>
  );
}

/**
 * The answer's Markdown drawn by the widget's own renderer (the same text the end user saw, never
 * parsed as HTML), loaded on first use so it stays out of the dashboard's first load.
 */
function Markdown({ text }: { text: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let cancelled = false;
    const el = ref.current;
    if (!el) return;
    el.textContent = text;
    void import('../../../../widget/src/markdown').then(({ renderMarkdown }) => {
      if (cancelled || !ref.current) return;
      ref.current.replaceChildren(renderMarkdown(text));
    });
    return () => {
      cancelled = true;
    };
  }, [text]);
  return <div ref={ref} className="markdown" />;
}
