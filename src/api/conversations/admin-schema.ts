import { z } from 'zod';
import { wholeNumberParam } from '../../lib/query-number.js';
import { MESSAGE_OUTCOMES } from '../../store/schema.js';
import { projectParams } from '../projects/admin-schema.js';
import { conversationStatus, handoffSchema, messageSchema } from './schema.js';

const isoTime = z.iso.datetime({ offset: true }).describe('ISO 8601 date-time, e.g. 2025-01-31T00:00:00Z.');

export const adminConversationsQuery = z
  .object({
    status: conversationStatus
      .optional()
      .describe('ACTIVE, or CLOSED (closed by an admin or idle past the project TTL, computed now).'),
    userId: z.string().min(1).max(256).optional().describe('Your external id of the end user.'),
    endUserId: z.string().min(1).max(64).optional().describe('AnswerDesk end-user id (`eu_…`).'),
    from: isoTime.optional().describe('Only conversations started at or after this time.'),
    to: isoTime.optional().describe('Only conversations started before this time.'),
    feedback: z
      .enum(['positive', 'negative', 'any', 'none'])
      .optional()
      .describe('positive / negative: with at least one rating of that kind; any: with a rating; none: without any.'),
    includeEmpty: z
      .enum(['true', 'false'])
      .default('false')
      .describe('"true" also lists conversations without any message (opened widgets nobody wrote in).'),
    handoff: z
      .enum(['requested', 'active', 'any'])
      .optional()
      .describe('Only conversations waiting for a person (`requested`), with one (`active`), or either (`any`): the inbox.'),
    limit: wholeNumberParam(1, 100, 20).describe('Page size, 1..100.'),
    cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous page.'),
  })
  .describe('Filters and paging; every filter is optional and they combine with AND.');

export const endUserSchema = z
  .object({
    id: z.string().describe('`eu_…`'),
    externalId: z.string().describe('Your id of the user.'),
    email: z.string().nullable(),
    name: z.string().nullable(),
    verified: z.boolean().describe('Identity proven by HMAC or JWT at least once.'),
  })
  .meta({ id: 'EndUser', description: 'An end user of the project.' });

export const adminConversationSchema = z
  .object({
    id: z.string(),
    status: conversationStatus.describe('CLOSED when closed by an admin or idle past the project TTL.'),
    messageCount: z.number().int(),
    createdAt: z.string().describe('ISO 8601 UTC'),
    updatedAt: z.string().describe('ISO 8601 UTC: time of the last message.'),
    closedAt: z.string().nullable().describe('When an admin closed it; null when open or closed by idling.'),
    lastMessagePreview: z.string().nullable().describe('First 150 characters of the last message.'),
    lastMessageRole: z.enum(['USER', 'ASSISTANT']).nullable(),
    endUser: endUserSchema.nullable().describe('The end user, or null for an anonymous conversation.'),
    handoff: handoffSchema,
  })
  .meta({ id: 'AdminConversation', description: 'A conversation as admins see it, with its end user.' });
export type AdminConversation = z.infer<typeof adminConversationSchema>;

export const adminConversationList = z
  .object({
    conversations: z.array(adminConversationSchema).describe('Most recently updated first.'),
    nextCursor: z.string().optional().describe('Present when more conversations follow.'),
  })
  .meta({ id: 'AdminConversationList', description: "One page of a project's conversations." });

export const feedbackItem = z
  .object({
    id: z.string(),
    messageId: z.string().nullable(),
    rating: z.enum(['POSITIVE', 'NEGATIVE']),
    comment: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'AdminFeedback', description: 'A rating given in a conversation.' });

export const adminMessageSchema = messageSchema
  .extend({
    model: z.string().nullable().describe('Model that wrote an assistant message; null for user messages.'),
    supersededBy: z
      .string()
      .nullable()
      .describe('Id of the answer that replaced this one when the user regenerated it; null for the current version. Superseded answers are not in the runtime history.'),
    outcome: z
      .enum(MESSAGE_OUTCOMES)
      .nullable()
      .describe(
        'What an answer did: `answered` (from the knowledge or the conversation), `declined` (said it does not know and cited nothing), `action` (answered from an action it ran), `error` (failed). Null for user messages and for answers stored before outcomes were recorded.',
      ),
  })
  .meta({ id: 'AdminMessage', description: 'A message with the model that wrote it.' });

export const adminConversationDetail = z
  .object({
    conversation: adminConversationSchema,
    messages: z.array(adminMessageSchema).describe('Oldest first, every version of a regenerated answer included.'),
    feedback: z.array(feedbackItem).describe('Ratings given in this conversation, oldest first.'),
  })
  .meta({ id: 'AdminConversationDetail', description: 'A conversation with every message and its feedback.' });
export type AdminConversationDetail = z.infer<typeof adminConversationDetail>;

export const adminConversationWrapped = z
  .object({ conversation: adminConversationSchema })
  .meta({ id: 'AdminConversationResponse', description: 'A conversation.' });

export const adminConversationParams = projectParams.extend({
  conversationId: z.string().min(1).max(64).describe('Conversation id (`conv_…`).'),
});
