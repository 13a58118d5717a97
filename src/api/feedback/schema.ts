import { z } from 'zod';

export const feedbackRating = z.enum(['POSITIVE', 'NEGATIVE']);

export const createFeedbackBody = z
  .object({
    conversationId: z.string().min(1).max(64).describe('The conversation being rated.'),
    rating: feedbackRating,
    messageId: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('A message of that conversation (e.g. the assistant message id from the stream); absent: the whole conversation.'),
    comment: z.string().max(2000).optional().describe('Free text, at most 2000 characters.'),
  })
  .strict()
  .meta({ id: 'CreateFeedbackRequest', description: 'One rating per (conversation, message): a repeat replaces the earlier rating.' });
export type CreateFeedbackBody = z.infer<typeof createFeedbackBody>;

export const feedbackSchema = z
  .object({
    id: z.string(),
    conversationId: z.string(),
    messageId: z.string().optional().describe('Present when a single message was rated.'),
    rating: feedbackRating,
    comment: z.string().optional(),
    createdAt: z.string().describe('ISO 8601 UTC; when this conversation/message was first rated.'),
  })
  .meta({ id: 'Feedback', description: 'A rating of a conversation or of one of its messages.' });
export type Feedback = z.infer<typeof feedbackSchema>;

export const feedbackCreated = z.object({ feedback: feedbackSchema }).meta({ id: 'FeedbackResponse', description: 'The stored rating.' });
