import { z } from 'zod';

export const errorSchema = z.object({ error: z.string() }).describe('Error');
export const validationErrorSchema = z
  .object({
    error: z.literal('Validation error'),
    details: z.array(z.object({ path: z.string(), message: z.string() })),
  })
  .describe('ValidationError');

export const externalUserId = z.string().min(1).max(256);

export const createConversationBody = z
  .object({
    endUserExternalId: externalUserId
      .optional()
      .describe('Your id for the end user; the conversation is tied to that user (created if new).'),
  })
  .strict()
  .nullish();

export const conversationCreated = z.object({ conversationId: z.string() });

export const conversationStatus = z.enum(['ACTIVE', 'CLOSED']);

export const conversationSummary = z.object({
  id: z.string(),
  status: conversationStatus.describe('CLOSED when closed by an admin or idle past the project TTL.'),
  messageCount: z.number().int(),
  createdAt: z.string().describe('ISO 8601 UTC'),
  updatedAt: z.string().describe('ISO 8601 UTC'),
  lastMessagePreview: z.string().describe('First 150 characters of the last message.'),
  lastMessageRole: z.enum(['USER', 'ASSISTANT']),
});
export type ConversationSummary = z.infer<typeof conversationSummary>;

export const listConversationsQuery = z.object({
  userId: externalUserId.describe('Your id of the end user whose conversations to list.'),
  limit: z.coerce.number().int().min(1).max(20).default(20),
  cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous page.'),
});

export const conversationList = z.object({
  conversations: z.array(conversationSummary),
  nextCursor: z.string().optional().describe('Present when more conversations follow.'),
});

export const sourceSchema = z
  .object({
    sourceId: z.string().optional(),
    type: z.enum(['url', 'document']).optional(),
    url: z.string().optional(),
    title: z.string().optional(),
  })
  .passthrough();

export const messageSchema = z
  .object({
    id: z.string(),
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    createdAt: z.string(),
    status: z.enum(['complete', 'streaming', 'error']).optional().describe('Assistant messages only.'),
    sources: z.array(sourceSchema).optional().describe('Cited knowledge (assistant messages).'),
    parts: z.array(z.record(z.string(), z.unknown())).optional().describe('AI SDK UI message parts (assistant messages).'),
  })
  .describe('Message');
export type Message = z.infer<typeof messageSchema>;

export const conversationIdParams = z.object({ conversationId: z.string().min(1).max(64) });

export const conversationWithMessages = z.object({
  conversationId: z.string(),
  messages: z.array(messageSchema),
});
