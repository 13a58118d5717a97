import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { startAnswer } from '../../agent/answer.js';
import { projectReads } from '../../agent/project-reads.js';
import { notifyConversation } from '../../conversations/live.js';
import { API_PREFIX, keyOwner } from '../../http/auth.js';
import { ServiceUnavailable } from '../../lib/errors.js';
import type { MediaResponse } from '../../http/openapi.js';
import { errorSchema, identityUnauthorized, validationErrorSchema } from '../conversations/schema.js';
import { SEND_MESSAGE_STREAM_DESCRIPTION, SEND_MESSAGE_STREAM_EXAMPLE, sendMessageBody, sendMessageStream } from './schema.js';
import { afterAnswer, handoffStream } from './handoff-stream.js';
import { AnswerMetrics } from './metrics.js';
import { acceptSend } from './service.js';
import { sendAnswerStream } from './stream.js';

/** The spec's 1 MB request limit for send-message (every other route has 100 KiB). */
export const SEND_MESSAGE_BODY_LIMIT = 1024 * 1024;

/** 503 body when this node, or this project on it, already runs as many answers as allowed. */
export const TOO_MANY_ANSWERS = 'Too many answers in progress';

/** POST /chat/messages: checks the send, stores the user message, streams and stores the answer. */
export const messageRoutes: FastifyPluginAsyncZod = async (app) => {
  // Every answer reads the project's enabled skills and actions; an admin write on this node clears these.
  const reads = projectReads(app.deps, { skills: app.caches.create(), actions: app.caches.create() });
  app.post(`${API_PREFIX}/chat/messages`, {
    config: { auth: 'runtime', bucket: 'chat' },
    bodyLimit: SEND_MESSAGE_BODY_LIMIT,
    schema: {
      tags: ['chat'],
      operationId: 'sendMessage',
      summary: 'Send a message and stream the answer',
      description:
        'Stores the last message of `messages` (the user\'s) and streams the agent\'s answer as server-sent events; the answer is stored when it ends, also if the client has left. ' +
        'Rate-limited in the `chat` bucket (30 per minute). Body limit 1 MiB.',
      body: sendMessageBody,
      response: {
        200: {
          description: SEND_MESSAGE_STREAM_DESCRIPTION,
          headers: {
            'x-vercel-ai-ui-message-stream': z.literal('v1').describe('The AI SDK UI message stream protocol version.'),
          },
          content: { 'text/event-stream': { schema: sendMessageStream, example: SEND_MESSAGE_STREAM_EXAMPLE } },
        } satisfies MediaResponse,
        400: errorSchema
          .or(validationErrorSchema)
          .describe(
            'Unknown conversation or another project\'s (`Invalid conversation`), closed or idle past the TTL (`Conversation expired`), or a validation error (`details`).',
          ),
        401: identityUnauthorized,
        403: errorSchema.describe(
          '`projectId` is another project\'s (`Project does not match API key`), or the request\'s `Origin` is not in the project\'s `allowedOrigins` (`Origin not allowed`).',
        ),
        404: errorSchema.describe('`projectId` names no project: `{"error":"Project not found"}`.'),
        409: errorSchema.describe('An answer in this conversation is still streaming: `{"error":"Conversation is busy"}`.'),
        503: errorSchema.describe(
          'Too many answers in progress (on this node, or for this project), the node is shutting down, or the database is unavailable. Retry after `Retry-After` seconds.',
        ),
      },
    },
    handler: async (request, reply) => {
      const started = performance.now();
      const owner = keyOwner(request);
      const body = request.body;
      // Capacity first: a refused send costs no query, stores nothing and holds no lease.
      const slot = app.answers.acquire(owner.project.id);
      if (typeof slot === 'string') {
        request.log.warn({ projectId: owner.project.id, cap: slot, running: app.answers.size }, 'send refused: too many answers in progress');
        throw ServiceUnavailable(TOO_MANY_ANSWERS);
      }
      let accepted;
      try {
        accepted = await acceptSend(app.deps, request, owner, body);
      } catch (err) {
        slot.release();
        throw err;
      }
      if (accepted.handoff !== null) {
        // With a person: the message is stored and shown to them live; the agent stays quiet.
        await accepted.release().finally(slot.release);
        if (accepted.userMessage) await notifyConversation(app.deps.events, accepted.conversation, 'message', accepted.userMessage.seq);
        return sendAnswerStream(reply, handoffStream(accepted.conversation.id, accepted.handoff), {
          keepAliveMs: app.deps.config.ANSWERDESK_STREAM_KEEPALIVE_MS,
        });
      }
      if (accepted.userMessage) void notifyConversation(app.deps.events, accepted.conversation, 'message', accepted.userMessage.seq);
      const metrics = app.deps.metrics;
      const answerMetrics = metrics.enabled ? new AnswerMetrics(metrics, started) : null;
      const streamClosed = metrics.streamOpened();
      const answer = startAnswer({
        deps: app.deps,
        project: owner.project,
        conversation: accepted.conversation,
        endUser: accepted.endUser,
        verifiedUser: accepted.verifiedUser,
        userTokens: body.userTokens ?? {},
        pageContext: body.pageContext,
        assistantMessageId: accepted.assistantMessageId,
        supersedes: accepted.supersedes,
        history: accepted.history,
        log: request.log,
        reads,
        abortSignal: slot.signal,
        requestId: request.id,
        onFinished: answerMetrics ? (summary) => answerMetrics.finished(owner.project.id, summary) : undefined,
        onSettled(stored) {
          return accepted
            .release()
            .finally(() => {
              slot.release();
              streamClosed();
            })
            .then(() => afterAnswer(app.deps, owner.project, accepted.conversation, accepted.assistantMessageId, request.log, stored));
        },
      });
      await sendAnswerStream(reply, answer, {
        keepAliveMs: app.deps.config.ANSWERDESK_STREAM_KEEPALIVE_MS,
        observe: answerMetrics ? (chunk) => answerMetrics.observe(chunk) : undefined,
      });
      answerMetrics?.end();
    },
  });
};
