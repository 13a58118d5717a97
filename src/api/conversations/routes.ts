import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { createConversation, getConversation } from '../../conversations/conversations.js';
import { currentHandoff } from '../../conversations/handoff.js';
import { listMessages } from '../../conversations/messages.js';
import { API_PREFIX, keyOwner } from '../../http/auth.js';
import { isNotFound, Unauthorized } from '../../lib/errors.js';
import { checkIdentity } from '../identity/verify.js';
import {
  conversationCreated,
  conversationIdParams,
  conversationList,
  conversationNotFound,
  conversationWithMessages,
  createConversationBody,
  identityUnauthorized,
  listConversationsQuery,
} from './schema.js';
import { listUserConversations, toMessage } from './service.js';

/** Runtime conversation endpoints: create, list one end user's, read one with its messages. */
export const conversationRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;

  app.post(`${API_PREFIX}/chat/conversations`, {
    config: { auth: 'runtime', bucket: 'session' },
    schema: {
      tags: ['chat'],
      operationId: 'createConversation',
      summary: 'Create a conversation',
      description:
        'Starts a conversation, optionally tied to an end user (`endUserExternalId`, created unverified if new). The body is optional. Rate-limited in the `session` bucket (10 per minute).',
      body: createConversationBody,
      response: { 201: conversationCreated, 401: identityUnauthorized },
    },
    handler: async (request, reply) => {
      const owner = keyOwner(request);
      const externalId = request.body?.endUserExternalId ?? null;
      await checkIdentity(request, owner, externalId);
      const row = await createConversation(db, owner.project.id, externalId ?? undefined).catch((err: unknown) => {
        // The key's project was deleted meanwhile: the key is unknown now, as the next call finds.
        throw isNotFound(err) ? Unauthorized() : err;
      });
      return reply.code(201).send({ conversationId: row.id });
    },
  });

  app.get(`${API_PREFIX}/chat/conversations`, {
    config: { auth: 'runtime' },
    schema: {
      tags: ['chat'],
      operationId: 'listConversations',
      summary: "List an end user's conversations",
      description:
        'Up to `limit` (20) conversations of the end user `userId` that have at least one message, most recently updated first; `nextCursor` pages on. An unknown user gets an empty list. An invalid `cursor` is a 400 validation error.',
      querystring: listConversationsQuery,
      response: { 200: conversationList, 401: identityUnauthorized },
    },
    handler: async (request) => {
      const owner = keyOwner(request);
      const { userId, limit, cursor } = request.query;
      await checkIdentity(request, owner, userId);
      return listUserConversations(db, owner.project, userId, { limit, cursor });
    },
  });

  app.get(`${API_PREFIX}/chat/conversations/:conversationId`, {
    config: { auth: 'runtime' },
    schema: {
      tags: ['chat'],
      operationId: 'getConversation',
      summary: "Read a conversation's messages",
      description: 'The full message history, oldest first. Assistant messages add `status`, `sources` and `parts`.',
      params: conversationIdParams,
      response: { 200: conversationWithMessages, 401: identityUnauthorized, 404: conversationNotFound },
    },
    handler: async (request) => {
      const owner = keyOwner(request);
      const conv = await getConversation(db, owner.project.id, request.params.conversationId);
      await checkIdentity(request, owner, conv.end_user_external_id ?? null);
      const messages = await listMessages(db, conv.id);
      return { conversationId: conv.id, messages: messages.map(toMessage), handoff: currentHandoff(conv, owner.project) };
    },
  });
};

