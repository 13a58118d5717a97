import type { FastifyReply } from 'fastify';
import { findConversation } from '../../conversations/conversations.js';
import { currentHandoff } from '../../conversations/handoff.js';
import { onConversationChange, onProjectChange, type ConversationChange } from '../../conversations/live.js';
import { lastSeq, messagesAfter } from '../../conversations/messages.js';
import { effectiveStatus, idleCutoff } from '../../conversations/status.js';
import type { AppDeps } from '../../deps.js';
import type { Project } from '../../projects/project.js';
import { replyHeaders } from '../../http/auth.js';
import { toMessage } from './service.js';

/** A client that stops reading is dropped once this much is waiting for it. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Sent first: how long an EventSource waits before reconnecting. */
const RETRY_MS = 2000;
/** The longest delay a timer takes (about 24.8 days); a later idle expiry is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The streams of this node that are open, so a shutdown can end them instead of waiting for them. */
export class LiveStreams {
  private readonly open = new Set<() => void>();
  add(end: () => void): () => void {
    this.open.add(end);
    return () => this.open.delete(end);
  }
  endAll(): void {
    for (const end of [...this.open]) end();
  }
}

interface SseWriter {
  send(event: { id?: string | number; event: string; data: unknown }): void;
  comment(text: string): void;
  readonly closed: boolean;
}

/**
 * Takes the reply over as a server-sent-event stream, with the headers the auth and CORS hooks set.
 * With each keep-alive it asks `stillAllowed` again and ends the stream when the caller's
 * credential no longer grants it (the client's reconnect then gets the 401 or 404 a new request
 * would). A check that fails (the database away) says nothing about the caller: the next one asks again.
 */
function openSse(reply: FastifyReply, streams: LiveStreams, keepAliveMs: number, stillAllowed: () => Promise<boolean>, onClose: () => void): SseWriter {
  const headers = {
    ...replyHeaders(reply),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // nginx and others would otherwise hold the events back in their buffers.
    'x-accel-buffering': 'no',
  };
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, headers);
  let closed = false;
  const write = (text: string) => {
    if (closed) return;
    raw.write(text);
    if (raw.writableLength > MAX_BUFFERED_BYTES) raw.destroy();
  };
  // Closed from here on, not from the 'close' event: that comes a tick after the end, and a write
  // in between (a change published in the same turn) is an 'error' on the response that nothing
  // listens to any more, which would take the process down.
  const end = () => {
    if (closed) return;
    closed = true;
    raw.end();
  };
  let checking = false;
  const keepAlive = setInterval(() => {
    write(': keep-alive\n\n');
    if (checking || closed) return;
    checking = true;
    stillAllowed()
      .then(
        (allowed) => allowed || end(),
        () => undefined,
      )
      .finally(() => (checking = false));
  }, keepAliveMs);
  const forget = streams.add(end);
  raw.on('close', () => {
    closed = true;
    clearInterval(keepAlive);
    forget();
    onClose();
  });
  write(`retry: ${RETRY_MS}\n\n`);
  return {
    send: ({ id, event, data }) => write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
    comment: (text) => write(`: ${text}\n\n`),
    get closed() {
      return closed;
    },
  };
}

/**
 * A conversation's live events as SSE: `message` (id = its position in the conversation) for every
 * message stored from now on (or after `Last-Event-ID`, replayed from the store), `handoff` with
 * the conversation's handoff state, first once on connect and then on every change, and `closed`
 * once the conversation is closed (on connect when it already is: closed, or idle past the TTL;
 * while the stream is open, when it goes idle past the TTL: a timer reads it again then). The bus only
 * says that something changed; what is sent is read from the store, so events arrive in order, none
 * is sent twice, and one missed on the bus is sent with the next.
 */
export async function streamConversationEvents(
  reply: FastifyReply,
  deps: AppDeps,
  streams: LiveStreams,
  project: Project,
  conv: { id: string; project_id: string },
  lastEventId: number | undefined,
  stillAllowed: () => Promise<boolean>,
): Promise<void> {
  const db = deps.store.db;
  let unsubscribe: (() => void) | undefined;
  let gone = false;
  let cursor = 0;
  let pending = Promise.resolve();
  let messagesDue = false;
  let stateDue = false;
  let sentHandoff: string | undefined;
  let sentClosed = false;
  let expiry: NodeJS.Timeout | undefined;

  const sse = openSse(reply, streams, deps.config.ANSWERDESK_STREAM_KEEPALIVE_MS, stillAllowed, () => {
    gone = true;
    clearTimeout(expiry);
    unsubscribe?.();
  });

  // Idle expiry is computed on read and nothing is written when it happens, so the stream reads
  // the conversation again when its last activity would pass the TTL; activity since then moves
  // the time on, and the next read sets the timer again.
  const expireAt = (row: { updated_at: string }) => {
    clearTimeout(expiry);
    const wait = Date.parse(row.updated_at) - Date.parse(idleCutoff(project)) + 1;
    expiry = setTimeout(
      () => {
        stateDue = true;
        void flush();
      },
      Math.min(Math.max(wait, 0), MAX_TIMER_MS),
    );
  };

  // One catch-up at a time: each reads what happened since the last one.
  const flush = () =>
    (pending = pending
      .then(async () => {
        if (gone) return;
        if (stateDue) {
          stateDue = false;
          const row = await findConversation(db, conv.project_id, conv.id);
          const handoff = row ? currentHandoff(row, project) : null;
          const text = JSON.stringify(handoff);
          // A notification that repeats the state already sent is not sent again.
          if (text !== sentHandoff) {
            sentHandoff = text;
            sse.send({ event: 'handoff', data: { conversationId: conv.id, handoff } });
          }
          if (row && !sentClosed && effectiveStatus(row, project) === 'CLOSED') {
            sentClosed = true;
            clearTimeout(expiry);
            sse.send({ event: 'closed', data: { conversationId: conv.id, status: 'CLOSED', closedAt: row.closed_at } });
          } else if (row && !sentClosed) expireAt(row);
        }
        while (messagesDue && !gone) {
          messagesDue = false;
          const rows = await messagesAfter(db, conv.id, cursor);
          for (const row of rows) {
            cursor = row.seq;
            sse.send({ id: row.seq, event: 'message', data: { conversationId: conv.id, message: toMessage(row) } });
          }
          if (rows.length === 200) messagesDue = true;
        }
      })
      .catch(() => {
        // The database is away: the next notification (or the client's reconnect) catches up.
      }));

  const onChange = (change: ConversationChange) => {
    // A handoff change or a close: the conversation's state is read again.
    if (change.type !== 'message') stateDue = true;
    else messagesDue = true;
    void flush();
  };

  // Subscribed before the starting point is read, so nothing stored in between is missed.
  unsubscribe = await onConversationChange(deps.events, conv, onChange);
  if (gone) return unsubscribe();
  try {
    cursor = lastEventId ?? (await lastSeq(db, conv.id));
  } catch {
    reply.raw.destroy();
    return;
  }
  stateDue = true;
  messagesDue = lastEventId !== undefined;
  await flush();
}

/**
 * A project's live changes as SSE for the dashboard inbox: `conversation` events saying which
 * conversation got a message or a handoff change, for it to read again. Live only, no replay.
 */
export async function streamProjectEvents(
  reply: FastifyReply,
  deps: AppDeps,
  streams: LiveStreams,
  projectId: string,
  stillAllowed: () => Promise<boolean>,
): Promise<void> {
  let unsubscribe: (() => void) | undefined;
  let gone = false;
  const sse = openSse(reply, streams, deps.config.ANSWERDESK_STREAM_KEEPALIVE_MS, stillAllowed, () => {
    gone = true;
    unsubscribe?.();
  });
  unsubscribe = await onProjectChange(deps.events, projectId, (change) => {
    sse.send({ event: 'conversation', data: { conversationId: change.conversationId, type: change.type, ...(change.seq !== undefined ? { seq: change.seq } : {}) } });
  });
  if (gone) unsubscribe();
  else sse.comment('ready');
}
