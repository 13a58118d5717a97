import { z } from 'zod';

import { errorSchema } from '../../http/error-schemas.js';
import { wholeNumberParam } from '../../lib/query-number.js';

export { errorSchema, validationErrorSchema } from '../../http/error-schemas.js';

/** 401 of the runtime operations that name or touch an end user (project setting `identityVerification`). */
export const identityUnauthorized = errorSchema.describe(
  'No valid key (`{"error":"Unauthorized"}`), or the project requires identity verification and the call names a user without `x-user-hmac` / `x-user-token` proof (`{"error":"Identity verification required"}`).',
);

/** 404 of the runtime operations on one conversation. */
export const conversationNotFound = errorSchema.describe('No conversation with this id in the key’s project: `{"error":"Conversation not found"}`.');

export const externalUserId = z.string().min(1).max(256);

export const createConversationRequest = z
  .object({
    endUserExternalId: externalUserId
      .optional()
      .describe('Your id for the end user; the conversation is tied to that user (created if new).'),
  })
  .strict()
  .meta({ id: 'CreateConversationRequest', description: 'Optional: no body, an empty body and `{}` all create an anonymous conversation.' });

/** The body of POST /chat/conversations may be absent (or empty, or JSON null). */
export const createConversationBody = createConversationRequest.nullish();

export const conversationCreated = z
  .object({ conversationId: z.string().describe('Id of the new conversation (`conv_…`).') })
  .meta({ id: 'Conversation', description: 'A created conversation.' });

export const conversationStatus = z.enum(['ACTIVE', 'CLOSED']);

export const handoffSchema = z
  .union([
    z.object({
      status: z.literal('requested'),
      requestedAt: z.string().describe('ISO 8601 UTC'),
      reason: z.string().nullable().describe('Why a person was asked for, as the user, the agent or the policy put it.'),
      via: z.enum(['user', 'agent', 'policy', 'teammate']).nullable().describe('How it was asked for.'),
    }),
    z.object({
      status: z.literal('active'),
      assignee: z.object({ id: z.string().nullable(), name: z.string() }).describe('The person answering.'),
      acceptedAt: z.string().describe('ISO 8601 UTC'),
      requestedAt: z.string().nullable(),
      reason: z.string().nullable(),
      via: z.enum(['user', 'agent', 'policy', 'teammate']).nullable(),
    }),
  ])
  .nullable()
  .meta({
    id: 'Handoff',
    description:
      'Handoff to a person: null (the agent answers), `requested` (waiting for a person; the agent no longer answers) or `active` (a person answers).',
  });
export type HandoffDoc = z.infer<typeof handoffSchema>;

export const conversationSummary = z
  .object({
    id: z.string(),
    status: conversationStatus.describe('CLOSED when closed by an admin or idle past the project TTL.'),
    messageCount: z.number().int(),
    createdAt: z.string().describe('ISO 8601 UTC'),
    updatedAt: z.string().describe('ISO 8601 UTC'),
    lastMessagePreview: z.string().describe('First 150 characters of the last message.'),
    lastMessageRole: z.enum(['USER', 'ASSISTANT']),
    handoff: handoffSchema,
  })
  .meta({ id: 'ConversationSummary', description: 'A conversation in a list.' });
export type ConversationSummary = z.infer<typeof conversationSummary>;

export const listConversationsQuery = z.object({
  userId: externalUserId.describe('Your id of the end user whose conversations to list.'),
  limit: wholeNumberParam(1, 20, 20).describe('Page size, 1..20, in decimal digits.'),
  cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous page.'),
});

export const conversationList = z
  .object({
    conversations: z.array(conversationSummary).describe('Most recently updated first.'),
    nextCursor: z.string().optional().describe('Present when more conversations follow: pass it as `cursor`.'),
  })
  .meta({ id: 'ConversationList', description: "One page of an end user's conversations." });

export const sourceSchema = z
  .object({
    sourceId: z.string().optional(),
    type: z.enum(['url', 'document']).optional(),
    url: z.string().optional(),
    title: z.string().optional(),
  })
  .passthrough()
  .meta({ id: 'MessageSource', description: 'A knowledge source an assistant message cites.' });

export const messageAuthorSchema = z
  .union([
    z.object({ type: z.literal('agent') }),
    z.object({ type: z.literal('human'), id: z.string().nullable().optional(), name: z.string() }),
  ])
  .meta({ id: 'MessageAuthor', description: 'The writer of an assistant message.' });

export const messageSchema = z
  .object({
    id: z.string(),
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    createdAt: z.string(),
    status: z.enum(['complete', 'streaming', 'error']).optional().describe('Assistant messages only.'),
    sources: z.array(sourceSchema).optional().describe('Cited knowledge (assistant messages).'),
    parts: z.array(z.record(z.string(), z.unknown())).optional().describe('AI SDK UI message parts (assistant messages).'),
    author: messageAuthorSchema.optional().describe('Who wrote an assistant message: the agent, or a person (with their name).'),
  })
  .meta({ id: 'Message', description: 'A message of a conversation. `id`, `role`, `content` and `createdAt` are always there.' });
export type Message = z.infer<typeof messageSchema>;

export const conversationIdParams = z.object({ conversationId: z.string().min(1).max(64) });

export const conversationWithMessages = z
  .object({
    conversationId: z.string(),
    messages: z.array(messageSchema).describe('Oldest first.'),
    handoff: handoffSchema,
  })
  .meta({ id: 'ConversationMessages', description: "A conversation's full message history." });

export const requestHandoffBody = z
  .object({ reason: z.string().trim().max(500).optional().describe('What the user needs a person for, in their words.') })
  .strict()
  .nullish()
  .meta({ id: 'RequestHandoffRequest', description: 'Optional: a reason for the person who takes over.' });

export const handoffResponse = z
  .object({ conversationId: z.string(), handoff: handoffSchema })
  .meta({ id: 'HandoffResponse', description: "The conversation's handoff state after the request." });
