import { useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, ApiError, errorMessage, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { PageHeader, formatTime } from '../components/ui';
import { useProjectId } from '../lib/project';

type FeedMessage = components['schemas']['ActivityItem'];

/** The contract's numbers for the dashboard activity feed (spec, "Limits"). */
export const POLL_INTERVAL_MS = 2_000;
export const POLL_LIMIT = 50;
export const SESSION_MS = 5 * 60_000;
/** How many messages the page keeps on screen. */
const KEEP = 500;

type State = 'live' | 'paused' | 'stopped';

/** Who wrote a message: the visitor, the assistant, or a person of the team (by name). */
function authorLabel(m: FeedMessage): string {
  if (m.role === 'user') return 'Visitor';
  return m.author?.type === 'human' ? `Team · ${m.author.name || 'Support team'}` : 'Assistant';
}

/**
 * The live feed: polls every 2 seconds for at most 50 new messages; a monitoring session lasts at
 * most 5 minutes, then polling stops until "Resume" starts a new session (from where the last one
 * left off). New messages appear at the top without reloading.
 */
export function Activity() {
  const projectId = useProjectId();
  const [messages, setMessages] = useState<FeedMessage[]>([]);
  const [state, setState] = useState<State>('live');
  const [error, setError] = useState<string | null>(null);
  const [truncated, setTruncated] = useState(false);
  const [session, setSession] = useState(1);
  const cursor = useRef<string | null>(null);

  const poll = useCallback(async () => {
    const result = await api.GET('/api/v1/admin/projects/{projectId}/activity', {
      params: { path: { projectId }, query: { limit: POLL_LIMIT, ...(cursor.current ? { after: cursor.current } : {}) } },
    });
    const page = unwrap(result);
    cursor.current = page.nextCursor;
    setTruncated(page.truncated);
    if (page.messages.length) setMessages((old) => [...[...page.messages].reverse(), ...old].slice(0, KEEP));
  }, [projectId]);

  useEffect(() => {
    if (state !== 'live') return;
    let inFlight = false;
    let stopped = false;
    const tick = async () => {
      if (inFlight || stopped) return;
      inFlight = true;
      try {
        await poll();
        setError(null);
      } catch (err) {
        setError(errorMessage(err));
        // Refusals will not change by asking again every 2 seconds.
        if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) setState('stopped');
      } finally {
        inFlight = false;
      }
    };
    void tick();
    const interval = setInterval(() => void tick(), POLL_INTERVAL_MS);
    const end = setTimeout(() => setState('paused'), SESSION_MS);
    return () => {
      stopped = true;
      clearInterval(interval);
      clearTimeout(end);
    };
  }, [state, session, poll]);

  const resume = () => {
    setState('live');
    setSession((s) => s + 1);
  };

  return (
    <>
      <PageHeader title="Activity" description="Messages as they are written, in every conversation of this project.">
        {state === 'live' ? (
          <button type="button" className="secondary" onClick={() => setState('stopped')}>
            Pause
          </button>
        ) : (
          <button type="button" onClick={resume}>
            Resume
          </button>
        )}
      </PageHeader>
      <p role="status" className={state === 'live' ? 'notice' : 'form-error'} data-feed-state={state}>
        {state === 'live'
          ? 'Live: checking for new messages every 2 seconds. Monitoring pauses after 5 minutes.'
          : state === 'paused'
            ? 'Paused: live monitoring stops after 5 minutes. Press Resume to watch again.'
            : 'Paused. Press Resume to watch again.'}
      </p>
      {error ? (
        <p className="form-error" role="alert">
          Could not check for messages: {error}
        </p>
      ) : null}
      {truncated ? <p className="muted">More than {POLL_LIMIT} messages arrived between two checks: the newest are shown.</p> : null}
      {messages.length === 0 ? (
        <p className="muted">No messages yet. New ones appear here as they are written.</p>
      ) : (
        <ol className="feed" aria-label="Messages, newest first">
          {messages.map((m) => (
            <li key={m.id} data-message-id={m.id}>
              <div className="meta">
                <span className={`badge${m.role === 'user' ? '' : ' ok'}`}>{authorLabel(m)}</span>
                <time dateTime={m.createdAt}>{formatTime(m.createdAt)}</time>
                {m.endUserExternalId ? <span>User {m.endUserExternalId}</span> : <span>Anonymous</span>}
                {m.status && m.status !== 'complete' ? <span className="badge bad">{m.status}</span> : null}
                <Link to={`/p/${projectId}/conversations/${m.conversationId}`}>Open conversation</Link>
              </div>
              <p>{m.preview}</p>
            </li>
          ))}
        </ol>
      )}
    </>
  );
}
