import type { UIMessageChunk } from 'ai';
import type { FastifyBaseLogger } from 'fastify';
import {
  getHandoff,
  handoffPolicy,
  recordAnswerDeclined,
  requestHandoff,
  type HandoffState,
} from '../../conversations/handoff.js';
import { notifyConversation } from '../../conversations/live.js';
import { findMessage, type MessageRow } from '../../conversations/messages.js';
import type { AppDeps } from '../../deps.js';
import type { Project } from '../../projects/project.js';

/**
 * The answer to a send while the conversation is with a person (or waiting for one): no model call,
 * just the AI SDK's chunks `start`, a `data-handoff` part with the state, and `finish`, so an AI SDK
 * client (`useChat`) reads it like any answer. Written as they are rather than through
 * createUIMessageStream, which gives a `start` without `messageId` an id of its own: no message is
 * stored, so `start` names none (an id there is one a client would rate, and get 404).
 */
export function handoffStream(conversationId: string, handoff: HandoffState): ReadableStream<UIMessageChunk> {
  const chunks: UIMessageChunk[] = [
    { type: 'start', messageMetadata: { conversationId } },
    { type: 'data-handoff', data: handoff },
    { type: 'finish', finishReason: 'stop' },
  ];
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

/**
 * After an answer is stored (or failed): tells the live listeners about it, applies the
 * "after N declined answers" policy, and announces a handoff the agent's tool asked for during the
 * answer. Best effort: the answer is stored whatever happens here. `stored` is the row the answer
 * wrote, when it did; otherwise it is looked up.
 */
export async function afterAnswer(
  deps: AppDeps,
  project: Project,
  conv: { id: string; project_id: string },
  assistantMessageId: string,
  log: FastifyBaseLogger,
  stored?: Pick<MessageRow, 'seq' | 'status' | 'outcome'>,
): Promise<void> {
  const db = deps.store.db;
  try {
    const row = stored ?? (await findMessage(db, conv.id, assistantMessageId));
    if (row) await notifyConversation(deps.events, conv, 'message', row.seq);
    // Counted only while no person has the conversation; null means it has a handoff.
    const streak = row && row.status === 'complete' ? await recordAnswerDeclined(db, conv.id, row.outcome === 'declined') : null;
    let handoff = streak === null ? await getHandoff(db, conv.id) : null;
    let changed = handoff !== null;
    if (streak !== null) {
      const policy = handoffPolicy(project);
      if (policy.enabled && policy.afterDeclined && streak >= policy.afterDeclined) {
        const result = await requestHandoff(db, conv, {
          reason: `The agent could not answer ${streak} question${streak === 1 ? '' : 's'} in a row.`,
          via: 'policy',
        });
        handoff = result.state;
        changed = result.changed;
      }
    }
    // A handoff seen now was made during this answer: sends on a handed-off conversation do not answer.
    if (changed) await notifyConversation(deps.events, conv, 'handoff');
  } catch (err) {
    log.error({ err, conversationId: conv.id }, 'could not finish the answer’s follow-up (live events, handoff policy)');
  }
}
