import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, errorMessage, unwrap } from '../../api/client';
import type { components } from '../../api/schema';
import { useMe } from '../../lib/auth';
import type { LiveState } from '../../lib/live';
import { usePermissions, useProjectId } from '../../lib/project';
import { LiveNote } from './LiveNote';
import { ConfirmButton, prettyJson, StatusBadge } from '../kit/kit';
import { focusPageTitle, formatDateTime, FormError, Loading, PageHeader, QueryError } from '../ui';

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

type AdminConversation = Detail['conversation'];

/**
 * One conversation as the end user saw it, with what the agent looked up and the ratings; and the
 * handoff controls: assign to me, reply as a person, hand back to the agent, close.
 */
export function Transcript({ conversationId, live }: { conversationId: string; live: LiveState }) {
  const projectId = useProjectId();
  const perms = usePermissions();
  const me = useMe();
  const queryClient = useQueryClient();
  const detail = useQuery({
    queryKey: detailKey(projectId, conversationId),
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/admin/projects/{projectId}/conversations/{conversationId}', { params: { path: { projectId, conversationId } } })),
  });
  // The button just pressed goes away with the state it changed (Assign to me once it is yours,
  // Hand back once the agent has it): the focus moves to the heading that now says who has the
  // conversation. After a close, ConfirmButton moves it to the page's title as its button goes away.
  const handoffHeading = useRef<HTMLHeadingElement>(null);
  const [focusHandoff, setFocusHandoff] = useState(false);
  useEffect(() => {
    if (!focusHandoff) return;
    if (handoffHeading.current) handoffHeading.current.focus();
    else focusPageTitle();
    setFocusHandoff(false);
  }, [focusHandoff]);
  const changed = ({ conversation }: { conversation: AdminConversation }) => {
    queryClient.setQueryData<Detail>(detailKey(projectId, conversationId), (d) => (d ? { ...d, conversation } : d));
    void queryClient.invalidateQueries({ queryKey: ['projects', projectId, 'conversations'] });
  };
  const path = { params: { path: { projectId, conversationId } } };
  const close = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/admin/projects/{projectId}/conversations/{conversationId}/close', path)),
    onSuccess: changed,
  });
  // "Assign to me": a signed-in user without `assignee` takes it themselves.
  const assign = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/admin/projects/{projectId}/conversations/{conversationId}/assign', { ...path, body: {} })),
    onSuccess: (result) => {
      changed(result);
      setFocusHandoff(true);
    },
  });
  const handBack = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/admin/projects/{projectId}/conversations/{conversationId}/handback', path)),
    onSuccess: (result) => {
      changed(result);
      setFocusHandoff(true);
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
          // Closing cannot be undone (the end user cannot write into it any more): it asks once more.
          <ConfirmButton label="Close conversation" confirmLabel="Yes, close it for good" disabled={!perms.work} busy={close.isPending} onConfirm={() => close.mutate()} />
        ) : null}
      </PageHeader>
      <FormError error={close.error} />
      <LiveNote live={live} />
      {c.status === 'ACTIVE' ? (
        <section className="card handoff-panel" aria-labelledby="handoff-heading">
          <h2 id="handoff-heading" ref={handoffHeading} tabIndex={-1}>
            {handoffTitle(c, me.user.id)}
          </h2>
          {c.handoff?.reason ? (
            <p className="muted">
              Reason given: <q>{c.handoff.reason}</q>
            </p>
          ) : null}
          {!perms.work ? <p className="muted small">Your role on this project can read conversations but not answer them.</p> : null}
          <div className="row handoff-buttons">
            {c.handoff?.status !== 'active' || c.handoff.assignee.id !== me.user.id ? (
              <button type="button" onClick={() => assign.mutate()} disabled={!perms.work || assign.isPending}>
                Assign to me
              </button>
            ) : null}
            {c.handoff ? (
              <button type="button" className="secondary" onClick={() => handBack.mutate()} disabled={!perms.work || handBack.isPending}>
                Hand back to the agent
              </button>
            ) : null}
          </div>
          <FormError error={assign.error ?? handBack.error} />
        </section>
      ) : null}
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
      <ReplyBox
        projectId={projectId}
        conversationId={conversationId}
        allowed={perms.work}
        closed={c.status !== 'ACTIVE'}
        onSent={(d) => queryClient.setQueryData(detailKey(projectId, conversationId), d)}
      />
    </>
  );
}

function handoffTitle(c: AdminConversation, myId: string): string {
  if (!c.handoff) return 'The agent is answering';
  if (c.handoff.status === 'requested') return 'Waiting for a person';
  return c.handoff.assignee.id === myId ? 'With you' : `With ${c.handoff.assignee.name}`;
}

/**
 * A person's reply, sent as the signed-in user. The draft stays until the server has stored the
 * reply, so a failed send (refused, or the network gone) loses nothing typed.
 */
function ReplyBox({
  projectId,
  conversationId,
  allowed,
  closed,
  onSent,
}: {
  projectId: string;
  conversationId: string;
  allowed: boolean;
  /** Closed (perhaps by someone else while this person typed): a draft stays readable, to copy. */
  closed: boolean;
  onSent: (update: (d: Detail | undefined) => Detail | undefined) => void;
}) {
  const queryClient = useQueryClient();
  const id = useId();
  const [draft, setDraft] = useState('');
  const send = useMutation({
    mutationFn: async (content: string) =>
      unwrap(await api.POST('/api/v1/admin/projects/{projectId}/conversations/{conversationId}/messages', { params: { path: { projectId, conversationId } }, body: { content } })),
    onSuccess: ({ conversation }, content) => {
      // Clears only what was sent: text typed while sending stays.
      setDraft((d) => (d === content ? '' : d));
      // The stored reply is read back with the conversation (the admin read has every message field).
      onSent((d) => (d ? { ...d, conversation } : d));
      void queryClient.invalidateQueries({ queryKey: ['projects', projectId, 'conversations'] });
    },
    // Refused (closed by someone else, say): read the conversation again so the page shows why.
    onError: () => void queryClient.invalidateQueries({ queryKey: ['projects', projectId, 'conversations'] }),
  });
  const submit = (event: FormEvent | { preventDefault(): void }) => {
    event.preventDefault();
    if (draft.trim() && !send.isPending && !closed && allowed) send.mutate(draft);
  };
  if (closed && !draft) return null;
  return (
    <form className="card reply-box" onSubmit={submit} aria-label="Reply to the customer">
      <label htmlFor={`${id}-reply`}>Your reply</label>
      <textarea
        id={`${id}-reply`}
        value={draft}
        rows={3}
        maxLength={20_000}
        disabled={!allowed}
        readOnly={closed}
        aria-describedby={`${id}-hint${send.error ? ` ${id}-error` : ''}`}
        aria-invalid={send.error ? true : undefined}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => {
          // Ctrl+Enter or ⌘+Enter sends; Enter alone is a new line.
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) submit(e);
        }}
      />
      <span className="hint" id={`${id}-hint`}>
        {closed
          ? 'The conversation was closed: this reply cannot be sent. Your text stays here to copy.'
          : 'Sent to the customer as you, and the agent stays quiet until you hand the conversation back. Ctrl+Enter sends.'}
      </span>
      {send.error ? (
        <p className="form-error" role="alert" id={`${id}-error`}>
          {errorMessage(send.error)}
        </p>
      ) : null}
      <div className="row">
        <button type="submit" disabled={!allowed || closed || send.isPending || !draft.trim()}>
          {send.isPending ? 'Sending…' : 'Send reply'}
        </button>
      </div>
    </form>
  );
}

function MessageItem({ message: m, feedback }: { message: Message; feedback: Feedback[] }) {
  const tools = toolParts(m);
  const human = m.author?.type === 'human' ? m.author : null;
  const label = m.role === 'user' ? 'Customer' : human ? human.name : 'Agent';
  return (
    <li className={`msg ${m.role}${human ? ' human' : ''}${m.supersededBy ? ' superseded' : ''}`} data-message-id={m.id} data-role={m.role}>
      <div className="msg-head">
        <strong>{label}</strong> {human ? <StatusBadge tone="neutral">person</StatusBadge> : null} <span className="muted">{formatDateTime(m.createdAt)}</span>
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
