import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { startAnswer } from '../../agent/answer.js';
import { API_PREFIX, keyOwner } from '../../http/auth.js';
import { errorSchema, validationErrorSchema } from '../conversations/schema.js';
import { SEND_MESSAGE_STREAM_DESCRIPTION, sendMessageBody } from './schema.js';
import { acceptSend } from './service.js';
import { sendAnswerStream } from './stream.js';

/** The spec's 1 MB request limit for send-message (every other route has 100 KiB). */
export const SEND_MESSAGE_BODY_LIMIT = 1024 * 1024;

/** POST /chat/messages: checks the send, stores the user message, streams and stores the answer. */
export const messageRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(`${API_PREFIX}/chat/messages`, {
    bodyLimit: SEND_MESSAGE_BODY_LIMIT,
    config: { bucket: 'chat' },
    schema: {
      tags: ['chat'],
      summary: 'Send a message and stream the answer',
      description: SEND_MESSAGE_STREAM_DESCRIPTION,
      body: sendMessageBody,
      response: {
        200: z.string().describe(SEND_MESSAGE_STREAM_DESCRIPTION),
        400: errorSchema.or(validationErrorSchema),
        401: errorSchema,
        403: errorSchema,
        404: errorSchema,
        409: errorSchema,
        413: errorSchema,
        429: errorSchema,
      },
    },
    handler: async (request, reply) => {
      const owner = keyOwner(request);
      const body = request.body;
      const accepted = await acceptSend(app.deps, request, owner, body);
      const answer = startAnswer({
        deps: app.deps,
        project: owner.project,
        conversation: accepted.conversation,
        endUser: accepted.endUser,
        verifiedUser: accepted.verifiedUser,
        userTokens: body.userTokens ?? {},
        pageContext: body.pageContext,
        assistantMessageId: accepted.assistantMessageId,
        log: request.log,
        onSettled: accepted.release,
      });
      await sendAnswerStream(reply, answer, { keepAliveMs: app.deps.config.ANSWERDESK_STREAM_KEEPALIVE_MS });
    },
  });
};
