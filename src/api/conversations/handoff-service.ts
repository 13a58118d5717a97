import type { FastifyBaseLogger } from 'fastify';
import { getConversation, type ConversationWithEndUser } from '../../conversations/conversations.js';
import {
  assignHandoff,
  handBack,
  handoffPolicy,
  handoffState,
  requestHandoff,
  type Assignee,
  type HandoffChange,
  type HandoffVia,
} from '../../conversations/handoff.js';
import { notifyConversation } from '../../conversations/live.js';
import { appendMessage, type MessageRow } from '../../conversations/messages.js';
import { effectiveStatus } from '../../conversations/status.js';
import type { AppDeps } from '../../deps.js';
import { BadRequest, Conflict } from '../../lib/errors.js';
import type { Project } from '../../projects/project.js';

export const HANDOFF_ERRORS = {
  disabled: 'Handoff is turned off for this project',
  closed: 'Conversation is closed',
  expired: 'Conversation expired',
} as const;

/** Who a person's reply is signed with when the caller names nobody and nobody has the conversation. */
export const DEFAULT_HUMAN_NAME = 'Support team';

async function announce(deps: AppDeps, conv: { id: string; project_id: string }, change: HandoffChange): Promise<void> {
  if (change.changed) await notifyConversation(deps.events, conv, 'handoff');
}

/**
 * The end user (the widget's button, the API) or the policy asks for a person. Refused when the
 * project turned handoff off, or when the conversation has ended (as a send would be).
 */
export async function askForPerson(
  deps: AppDeps,
  project: Project,
  conv: ConversationWithEndUser,
  input: { reason?: string | null; via: Exclude<HandoffVia, 'teammate'> },
): Promise<HandoffChange> {
  if (!handoffPolicy(project).enabled) throw Conflict(HANDOFF_ERRORS.disabled);
  if (effectiveStatus(conv, project) === 'CLOSED') throw BadRequest(HANDOFF_ERRORS.expired);
  const change = await requestHandoff(deps.store.db, conv, input);
  await announce(deps, conv, change);
  return change;
}

/** The policy's "hand off on a NEGATIVE rating": best effort, after the rating is stored. */
export async function handOffOnNegativeFeedback(deps: AppDeps, project: Project, conv: ConversationWithEndUser, log: FastifyBaseLogger): Promise<void> {
  const policy = handoffPolicy(project);
  if (!policy.enabled || !policy.onNegativeFeedback || conv.handoff_status !== null) return;
  if (effectiveStatus(conv, project) === 'CLOSED') return;
  try {
    await askForPerson(deps, project, conv, { reason: 'The user rated an answer as not helpful.', via: 'policy' });
  } catch (err) {
    log.error({ err, conversationId: conv.id }, 'could not hand off after negative feedback');
  }
}

/** A teammate takes the conversation over (or accepts a request). Works whether or not the project offers handoff. */
export async function takeOver(deps: AppDeps, project: Project, conversationId: string, assignee: Assignee): Promise<ConversationWithEndUser> {
  const conv = await getConversation(deps.store.db, project.id, conversationId);
  if (effectiveStatus(conv, project) === 'CLOSED') throw Conflict(HANDOFF_ERRORS.closed);
  await announce(deps, conv, await assignHandoff(deps.store.db, conv, assignee));
  return getConversation(deps.store.db, project.id, conversationId);
}

/** Returns the conversation to the agent; the agent answers the next message, with the people's replies in its history. */
export async function returnToAgent(deps: AppDeps, project: Project, conversationId: string): Promise<ConversationWithEndUser> {
  const conv = await getConversation(deps.store.db, project.id, conversationId);
  await announce(deps, conv, await handBack(deps.store.db, conv));
  return getConversation(deps.store.db, project.id, conversationId);
}

/**
 * A person's reply, stored as an `assistant` message written by them. A person who replies has the
 * conversation: if it was not with a person yet, it becomes theirs (active), so the agent does not
 * answer over them. Without a name, the reply is signed by whoever has the conversation.
 */
export async function postHumanReply(
  deps: AppDeps,
  project: Project,
  conversationId: string,
  input: { content: string; author?: { id?: string | null; name?: string } },
): Promise<{ message: MessageRow; conversation: ConversationWithEndUser }> {
  const db = deps.store.db;
  const conv = await getConversation(db, project.id, conversationId);
  if (effectiveStatus(conv, project) === 'CLOSED') throw Conflict(HANDOFF_ERRORS.closed);
  const state = handoffState(conv);
  const holder = state?.status === 'active' ? state.assignee : null;
  const name = input.author?.name ?? holder?.name ?? DEFAULT_HUMAN_NAME;
  const id = input.author?.id ?? (input.author?.name === undefined ? (holder?.id ?? null) : null);
  if (!holder) await announce(deps, conv, await assignHandoff(db, conv, { id, name }));
  const message = await appendMessage(db, conv, { role: 'assistant', content: input.content, status: 'complete', author: { type: 'human', id, name } });
  await notifyConversation(deps.events, conv, 'message', message.seq);
  return { message, conversation: await getConversation(db, project.id, conversationId) };
}
