import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { API_PREFIX, keyOwner } from '../../http/auth.js';
import { findEndUser } from '../end-users/service.js';
import { checkIdentity } from '../identity/verify.js';
import {
  conversationCreated,
  conversationIdParams,
  conversationList,
  conversationWithMessages,
  createConversationBody,
  errorSchema,
  listConversationsQuery,
  validationErrorSchema,
} from './schema.js';
import { createConversation, decodeCursor, getConversationOr404, listConversationPage, listMessages, toMessage, toSummary } from './service.js';

/** Runtime conversation endpoints: create, list one end user's, read one with its messages. */
export const conversationRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;

  app.post(`${API_PREFIX}/chat/conversations`, {
    config: { bucket: 'session' },
    schema: {
      tags: ['chat'],
      summary: 'Create a conversation',
      body: createConversationBody,
      response: { 201: conversationCreated, 400: validationErrorSchema, 401: errorSchema, 429: errorSchema },
    },
    handler: async (request, reply) => {
      const owner = keyOwner(request);
      const externalId = request.body?.endUserExternalId ?? null;
      await checkIdentity(request, owner, externalId);
      const row = await createConversation(db, owner.project.id, externalId ?? undefined);
      return reply.code(201).send({ conversationId: row.id });
    },
  });

  app.get(`${API_PREFIX}/chat/conversations`, {
    schema: {
      tags: ['chat'],
      summary: "List an end user's conversations",
      description: 'Up to 20 conversations with at least one message, most recently updated first.',
      querystring: listConversationsQuery,
      response: { 200: conversationList, 400: validationErrorSchema, 401: errorSchema },
    },
    handler: async (request) => {
      const owner = keyOwner(request);
      const { userId, limit, cursor } = request.query;
      await checkIdentity(request, owner, userId);
      if (cursor) decodeCursor(cursor);
      const user = await findEndUser(db, owner.project.id, userId);
      if (!user) return { conversations: [] };
      const page = await listConversationPage(
        db,
        { projectId: owner.project.id, endUserId: user.id, project: owner.project },
        { limit, cursor },
      );
      return {
        conversations: page.rows.map((r) => toSummary(r, owner.project)),
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      };
    },
  });

  app.get(`${API_PREFIX}/chat/conversations/:conversationId`, {
    schema: {
      tags: ['chat'],
      summary: "Read a conversation's messages",
      params: conversationIdParams,
      response: { 200: conversationWithMessages, 401: errorSchema, 404: errorSchema },
    },
    handler: async (request) => {
      const owner = keyOwner(request);
      const conv = await getConversationOr404(db, owner.project.id, request.params.conversationId);
      await checkIdentity(request, owner, conv.end_user_external_id ?? null);
      const messages = await listMessages(db, conv.id);
      return { conversationId: conv.id, messages: messages.map(toMessage) };
    },
  });
};

