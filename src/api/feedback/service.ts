import type { FeedbackRow } from '../../conversations/feedback.js';
import type { Feedback } from './schema.js';

export function toFeedback(row: FeedbackRow): Feedback {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    ...(row.message_id ? { messageId: row.message_id } : {}),
    rating: row.rating,
    ...(row.comment !== null ? { comment: row.comment } : {}),
    createdAt: row.created_at,
  };
}
