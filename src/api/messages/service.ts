import type { FastifyRequest } from 'fastify';
import type { VerifiedEndUser } from '../../agent/prompt.js';
import type { ToolContext } from '../../agent/tools.js';
import type { AppDeps } from '../../http/context.js';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { appendMessage, effectiveStatus, findConversation, lastMessages, type MessageRow } from '../conversations/service.js';
import { checkIdentity } from '../identity/verify.js';
import type { KeyOwner } from '../projects/service.js';
import { claimAnswerLease, releaseAnswerLease } from './lease.js';
import { messageText, type SendMessageBody } from './schema.js';

/** Slack on top of the model timeout before another node may take an unreleased lease over. */
const LEASE_MARGIN_MS = 30_000;

/** A send that passed every check: its user message is stored and the conversation is ours. */
export interface AcceptedSend {
  conversation: { id: string; project_id: string };
  endUser: ToolContext['endUser'];
  verifiedUser: VerifiedEndUser | null;
  assistantMessageId: string;
  /** Releases the conversation for the next send; call once, when the answer is stored. */
  release(): Promise<void>;
}

/**
 * Checks a send in the order of the error table (project, conversation, identity, expiry, busy),
 * then stores the user message. Every refusal happens before anything is written; the conversation
 * lease is the last check, so a refused request never holds it.
 */
export async function acceptSend(
  deps: AppDeps,
  request: FastifyRequest,
  owner: KeyOwner,
  body: SendMessageBody,
): Promise<AcceptedSend> {
  const db = deps.store.db;
  const project = owner.project;
  if (body.projectId !== undefined && body.projectId !== project.id) {
    const exists = await db.selectFrom('projects').select('id').where('id', '=', body.projectId).executeTakeFirst();
    throw exists ? Forbidden('Project does not match API key') : NotFound('Project not found');
  }

  const conv = await findConversation(db, project.id, body.conversationId);
  if (!conv) throw BadRequest('Invalid conversation');
  const externalId = conv.end_user_external_id ?? null;
  const verified = await checkIdentity(request, owner, externalId);
  if (effectiveStatus(conv, project) === 'CLOSED') throw BadRequest('Conversation expired');

  let verifiedUser: VerifiedEndUser | null = null;
  if (verified && conv.end_user_id && externalId) {
    const user = await db.selectFrom('end_users').select(['name', 'email']).where('id', '=', conv.end_user_id).executeTakeFirst();
    verifiedUser = { externalId, name: user?.name ?? null, email: user?.email ?? null };
  }

  const ttl = deps.config.ANSWERDESK_MODEL_TIMEOUT_MS + LEASE_MARGIN_MS;
  const token = await claimAnswerLease(db, conv.id, ttl);
  if (!token) throw Conflict('Conversation is busy');
  const release = () => releaseAnswerLease(db, conv.id, token);

  const text = messageText(body.messages[body.messages.length - 1]);
  try {
    if (!isRetry(await lastMessages(db, conv.id, 2), text)) {
      await appendMessage(db, conv, { role: 'user', content: text, status: 'complete' });
    }
  } catch (err) {
    await release();
    throw err;
  }

  return {
    conversation: { id: conv.id, project_id: conv.project_id },
    endUser: conv.end_user_id && externalId ? { id: conv.end_user_id, externalId, verified } : null,
    verifiedUser,
    assistantMessageId: newId('msg'),
    release,
  };
}

/**
 * A send is a retry of the previous question when that question got no answer, or only a failed one,
 * and the text is the same: the widget's "Try again" and an AI SDK client's `regenerate()` send it
 * again. The question is then not stored a second time; the failed answer stays in the history (the
 * model is not shown it) and the new answer follows it.
 */
export function isRetry(tail: MessageRow[], text: string): boolean {
  const last = tail[tail.length - 1];
  if (last?.role === 'user') return last.content === text;
  const question = tail[tail.length - 2];
  return last?.role === 'assistant' && last.status === 'error' && question?.role === 'user' && question.content === text;
}
