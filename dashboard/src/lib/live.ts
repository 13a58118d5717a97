import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { meQuery } from './auth';

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'offline';

/**
 * Follows the project's conversation changes (GET /api/v1/admin/projects/{id}/events, an SSE stream
 * sent with the session cookie) and reads the conversation list and the open conversation again on
 * each change, so the inbox and the transcript update without a reload. The stream carries only
 * "conversation X changed": what changed is read from the admin API, so nothing is shown that the
 * API would not return. EventSource reconnects by itself; after a reconnect everything is read again,
 * since the stream does not replay what happened while it was down.
 *
 * A stream the server refuses (the session ended) is not retried by EventSource: the page reads its
 * data again, whose 401 brings up the "Your session has ended" dialog, and the stream is opened
 * again once the user has signed in again (the signed-in user is read back then).
 */
export function useProjectEvents(projectId: string): LiveState {
  const queryClient = useQueryClient();
  const [state, setState] = useState<LiveState>('connecting');
  // Who is signed in (the session's own query): null from a 401 until signing in again.
  const signedIn = useQuery({ ...meQuery, select: (me) => me?.user.id ?? null }).data ?? null;
  useEffect(() => {
    if (typeof EventSource === 'undefined') return;
    if (!signedIn) {
      setState('offline');
      return;
    }
    setState('connecting');
    const source = new EventSource(`/api/v1/admin/projects/${encodeURIComponent(projectId)}/events`);
    let pending: ReturnType<typeof setTimeout> | undefined;
    // A burst of changes (a reply and its handoff change) is read again once.
    const refresh = () => {
      if (pending) return;
      pending = setTimeout(() => {
        pending = undefined;
        void queryClient.invalidateQueries({ queryKey: ['projects', projectId, 'conversations'] });
      }, 50);
    };
    // Read again on every (re)connect: changes made before the server started following the
    // project, or while the stream was down, are not replayed.
    source.onopen = () => {
      setState('live');
      refresh();
    };
    // CLOSED: the server refused the stream (the session ended, say); the page says it is not live,
    // and reads its data again: a 401 there shows the dialog that signs in again (and reopens this).
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) return setState('reconnecting');
      setState('offline');
      refresh();
    };
    source.addEventListener('conversation', refresh);
    return () => {
      if (pending) clearTimeout(pending);
      source.close();
    };
  }, [projectId, queryClient, signedIn]);
  return state;
}
