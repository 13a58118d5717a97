import type { Kysely, Selectable } from 'kysely';
import { NotFound } from '../lib/errors.js';
import { newId, now } from '../lib/ids.js';
import { isForeignKeyViolation, retryDeadlock, type Database } from '../store/index.js';
import type { FeedbackTable } from '../store/schema.js';
import { enqueueEvent } from '../webhooks/events.js';
import { findMessage } from './messages.js';

type Db = Kysely<Database>;
export type FeedbackRow = Selectable<FeedbackTable>;

/** `target` of a rating of the whole conversation (a message rating uses the message id). */
const WHOLE_CONVERSATION = '';

export interface NewFeedback {
  rating: FeedbackRow['rating'];
  /** A message of the conversation; absent: the whole conversation is rated. */
  messageId?: string;
  comment?: string;
}

/**
 * Records a rating of `conversation` (already authorized for the caller's project), or of one of its
 * messages. A repeat for the same (conversation, message) replaces rating and comment in place (same
 * id, first `created_at`); the unique (conversation_id, target) index makes it one atomic upsert on
 * both databases, so two concurrent ratings cannot leave two rows. Each rating, a replacing one too,
 * sends `feedback.created` in the same transaction. 404 when the conversation went with its project
 * since it was read.
 */
export async function submitFeedback(db: Db, conversation: { id: string; project_id: string }, input: NewFeedback): Promise<FeedbackRow> {
  if (input.messageId !== undefined && !(await findMessage(db, conversation.id, input.messageId))) throw NotFound('Message not found');
  const at = now();
  return retryDeadlock(() =>
    db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('feedback')
        .values({
          id: newId('fb'),
          project_id: conversation.project_id,
          conversation_id: conversation.id,
          message_id: input.messageId ?? null,
          target: input.messageId ?? WHOLE_CONVERSATION,
          rating: input.rating,
          comment: input.comment ?? null,
          created_at: at,
          updated_at: at,
        })
        .onConflict((oc) =>
          oc.columns(['conversation_id', 'target']).doUpdateSet((eb) => ({
            rating: eb.ref('excluded.rating'),
            comment: eb.ref('excluded.comment'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      await enqueueEvent(trx, conversation.project_id, 'feedback.created', {
        conversationId: conversation.id,
        feedback: {
          id: row.id,
          messageId: row.message_id,
          rating: row.rating,
          comment: row.comment,
          createdAt: row.created_at,
          updatedAt: row.updated_at,
        },
      });
      return row;
    }),
  ).catch((err: unknown) => {
    throw isForeignKeyViolation(err) ? NotFound('Conversation not found') : err;
  });
}

/** The ratings of a conversation, oldest first. */
export async function listFeedback(db: Db, conversationId: string): Promise<FeedbackRow[]> {
  return db
    .selectFrom('feedback')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}
