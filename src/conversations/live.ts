import { conversationTopic, projectTopic, type EventBus } from '../events/bus.js';

/** The events bus as the core and the agent see it (they name it through this module). */
export type LiveEvents = EventBus;

/**
 * What changed in a conversation: `message` (a message was stored), `handoff` (its handoff state
 * changed) or `closed` (a teammate closed it). Subscribers read the store for the change itself, so an event is only a hint and a
 * missed or repeated one costs nothing but a read.
 */
export interface ConversationChange {
  type: 'message' | 'handoff' | 'closed';
  conversationId: string;
  /** The new message's position, for `message`. */
  seq?: number;
}

/** Tells the conversation's live listeners (widgets) and the project's (dashboard inbox) about a change. */
export async function notifyConversation(
  events: LiveEvents | undefined,
  conversation: { id: string; project_id: string },
  type: ConversationChange['type'],
  seq?: number,
): Promise<void> {
  if (!events) return;
  const change: ConversationChange = { type, conversationId: conversation.id, ...(seq !== undefined ? { seq } : {}) };
  await Promise.all([
    events.publish(conversationTopic(conversation.project_id, conversation.id), { ...change }),
    events.publish(projectTopic(conversation.project_id), { ...change }),
  ]);
}

/** Listens to one conversation's changes; resolves once the subscription is in place. */
export function onConversationChange(
  events: LiveEvents,
  conversation: { id: string; project_id: string },
  listener: (change: ConversationChange) => void,
): Promise<() => void> {
  return events.subscribe(conversationTopic(conversation.project_id, conversation.id), (event) => listener(event as unknown as ConversationChange));
}

/** Listens to every conversation change of a project. */
export function onProjectChange(events: LiveEvents, projectId: string, listener: (change: ConversationChange) => void): Promise<() => void> {
  return events.subscribe(projectTopic(projectId), (event) => listener(event as unknown as ConversationChange));
}
