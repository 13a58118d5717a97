import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { getConversation } from '../../conversations/conversations.js';
import { submitFeedback } from '../../conversations/feedback.js';
import { API_PREFIX, keyOwner } from '../../http/auth.js';
import { errorSchema, identityUnauthorized } from '../conversations/schema.js';
import { handOffOnNegativeFeedback } from '../conversations/handoff-service.js';
import { checkIdentity } from '../identity/verify.js';
import { createFeedbackBody, feedbackCreated } from './schema.js';
import { toFeedback } from './service.js';

/** POST /chat/feedback: a positive or negative rating of a conversation or one of its messages. */
export const feedbackRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;

  app.post(`${API_PREFIX}/chat/feedback`, {
    config: { auth: 'runtime' },
    schema: {
      tags: ['chat'],
      operationId: 'submitFeedback',
      summary: 'Rate a conversation or a message',
      description: 'One rating per (conversation, message); a repeat replaces the earlier rating and comment.',
      body: createFeedbackBody,
      response: {
        201: feedbackCreated,
        401: identityUnauthorized,
        404: errorSchema.describe(
          'Unknown conversation, or another project\'s (`Conversation not found`), or `messageId` is not a message of it (`Message not found`).',
        ),
      },
    },
    handler: async (request, reply) => {
      const owner = keyOwner(request);
      const { conversationId, ...input } = request.body;
      const conv = await getConversation(db, owner.project.id, conversationId);
      // Rating a user-bound conversation speaks for that user, so "required" mode wants proof.
      await checkIdentity(request, owner, conv.end_user_external_id ?? null);
      const row = await submitFeedback(db, conv, input);
      if (row.rating === 'NEGATIVE') await handOffOnNegativeFeedback(app.deps, owner.project, conv, request.log);
      return reply.code(201).send({ feedback: toFeedback(row) });
    },
  });
};
