import type { FastifyRequest } from 'fastify';
import type { VerifiedEndUser } from '../../agent/prompt.js';
import type { ToolContext } from '../../agent/tools.js';
import { findConversation } from '../../conversations/conversations.js';
import { claimAnswerLeaseWithin, releaseAnswerLease } from '../../conversations/leases.js';
import { appendMessage, listHistory, type HistoryMessage, type MessageRow } from '../../conversations/messages.js';
import { handoffState, type HandoffState } from '../../conversations/handoff.js';
import { effectiveStatus } from '../../conversations/status.js';
import type { AppDeps } from '../../deps.js';
import { BadRequest, Conflict, Forbidden, isNotFound, NotFound } from '../../lib/errors.js';
import { isForeignKeyViolation } from '../../store/index.js';
import { newId } from '../../lib/ids.js';
import type { KeyOwner } from '../../projects/keys.js';
import { projectExists } from '../../projects/projects.js';
import { isUnavailable, retryWhileUnavailable } from '../../store/faults.js';
import { checkIdentity } from '../identity/verify.js';
import { messageText, type SendMessageBody } from './schema.js';

/** Slack on top of the model timeout before another node may take an unreleased lease over. */
const LEASE_MARGIN_MS = 30_000;
/**
 * How long a send waits for the conversation while a person has it. Such sends hold it only to store
 * their message, so a few at once (two tabs) wait for each other; an agent's answer still streaming
 * (the handoff came during it) is still refused as busy once this has passed.
 */
const HANDOFF_WAIT_MS = 2_000;
/** How long releasing a conversation is retried while the database is unavailable. */
const RELEASE_RETRY_MS = 15_000;

/** A send that passed every check: its user message is stored and the conversation is ours. */
export interface AcceptedSend {
  conversation: { id: string; project_id: string };
  endUser: ToolContext['endUser'];
  verifiedUser: VerifiedEndUser | null;
  assistantMessageId: string;
  /** A regenerate: the answer the new one replaces (hidden from the model, superseded when stored). */
  supersedes?: string;
  /** Releases the conversation for the next send; call once, when the answer is stored. */
  release(): Promise<void>;
  /** The conversation's handoff as the send found it: when not null, the agent does not answer. */
  handoff: HandoffState;
  /** The user message this send stored (none for a retry or a regenerate). */
  userMessage?: MessageRow;
  /** The conversation's current messages, oldest first, the question included: what the model is given. */
  history: HistoryMessage[];
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
    throw (await projectExists(db, body.projectId)) ? Forbidden('Project does not match API key') : NotFound('Project not found');
  }

  const conv = await findConversation(db, project.id, body.conversationId);
  if (!conv) throw BadRequest('Invalid conversation');
  const externalId = conv.end_user_external_id;
  const verified = await checkIdentity(request, owner, externalId);
  if (effectiveStatus(conv, project) === 'CLOSED') throw BadRequest('Conversation expired');

  const verifiedUser: VerifiedEndUser | null =
    verified && externalId ? { externalId, name: conv.end_user_name, email: conv.end_user_email } : null;

  const handoff = handoffState(conv);
  const ttl = deps.config.ANSWERDESK_MODEL_TIMEOUT_MS + LEASE_MARGIN_MS;
  const token = await claimAnswerLeaseWithin(db, conv.id, ttl, handoff === null ? 0 : HANDOFF_WAIT_MS).catch((err: unknown) => {
    throw sentToGone(err);
  });
  if (!token) throw Conflict('Conversation is busy');
  // Also when the database was away as the answer ended: otherwise the conversation stays busy
  // until the lease expires. The deletion is idempotent, so retrying it is safe.
  const release = () =>
    retryWhileUnavailable(() => releaseAnswerLease(db, conv.id, token), {
      budgetMs: RELEASE_RETRY_MS,
      onRetry: (err) => request.log.warn({ err: { message: (err as Error).message }, conversationId: conv.id }, 'could not release the conversation yet; retrying'),
    });

  const text = messageText(body.messages[body.messages.length - 1]);
  let supersedes: string | undefined;
  let userMessage: MessageRow | undefined;
  let history: HistoryMessage[];
  try {
    // Read once, under the lease: its tail decides retry and regenerate, and the answer's model is
    // given the whole of it, so the agent does not read it again.
    history = await listHistory(db, conv.id);
    const tail = history.slice(-2);
    // While a person has the conversation there is no answer of the agent's to regenerate, and no
    // failed answer to retry: a message that repeats the one before ("hello?") is a new message.
    if (body.trigger === 'regenerate-message' && handoff === null) supersedes = answerToRegenerate(tail, text, body.messageId);
    else if (handoff !== null || !isRetry(tail, text)) {
      userMessage = await appendMessage(db, conv, { role: 'user', content: text, status: 'complete' });
      history.push({ id: userMessage.id, role: userMessage.role, content: userMessage.content, status: userMessage.status });
    }
  } catch (err) {
    const released = release().catch((releaseErr: unknown) => request.log.error({ err: releaseErr, conversationId: conv.id }, 'could not release the conversation'));
    // A refusal (400) is answered once the conversation is free again, so a client that sends its
    // next message at once does not find it busy. With the database away the request fails now
    // (503) and the release goes on retrying behind it.
    if (!isUnavailable(err)) await released;
    throw sentToGone(err);
  }

  return {
    conversation: { id: conv.id, project_id: conv.project_id },
    endUser: conv.end_user_id && externalId ? { id: conv.end_user_id, externalId, verified } : null,
    verifiedUser,
    assistantMessageId: newId('msg'),
    supersedes,
    release,
    handoff,
    userMessage,
    history,
  };
}

/**
 * What a send throws when its conversation went (its project deleted) since it was read: the lease's
 * or the question's foreign key, or the conversation not found to append to. The answer is the one a
 * send to it gets now, 400 `Invalid conversation`.
 */
function sentToGone(err: unknown): unknown {
  return isForeignKeyViolation(err) || isNotFound(err) ? BadRequest('Invalid conversation') : err;
}

/**
 * A send is a retry of the previous question when that question got no answer, or only a failed one,
 * and the text is the same: the widget's "Try again" sends it again, as does any client that knows
 * nothing of `trigger`. The question is then not stored a second time; the failed answer stays in the
 * history (the model is not shown it) and the new answer follows it.
 */
export function isRetry(tail: HistoryMessage[], text: string): boolean {
  const last = tail[tail.length - 1];
  if (last?.role === 'user') return last.content === text;
  const question = tail[tail.length - 2];
  return last?.role === 'assistant' && last.status === 'error' && question?.role === 'user' && question.content === text;
}

export const REGENERATE_ERRORS = {
  nothing: 'There is no answer to regenerate',
  notLast: "Only the conversation's last answer can be regenerated",
  otherQuestion: "The last message is not the conversation's last question",
} as const;

/**
 * An AI SDK client's `regenerate()` (`trigger: "regenerate-message"`): the question is already
 * stored, so nothing is appended; the new answer replaces the conversation's last answer, returned
 * here (undefined when the last question has no answer yet). `messageId`, when sent, must name that
 * answer, or the question it answers (the SDK's `regenerate({messageId})` takes either); the text
 * sent must be that question's, so a client that missed a turn cannot replace someone else's answer.
 */
export function answerToRegenerate(tail: HistoryMessage[], text: string, messageId: string | undefined): string | undefined {
  const last = tail[tail.length - 1];
  const answer = last?.role === 'assistant' ? last : undefined;
  const question = answer ? tail[tail.length - 2] : last;
  if (question?.role !== 'user') {
    if (messageId !== undefined) throw BadRequest(REGENERATE_ERRORS.notLast);
    throw BadRequest(REGENERATE_ERRORS.nothing);
  }
  if (messageId !== undefined && messageId !== answer?.id && messageId !== question.id) throw BadRequest(REGENERATE_ERRORS.notLast);
  if (question.content !== text) throw BadRequest(REGENERATE_ERRORS.otherQuestion);
  return answer?.id;
}
