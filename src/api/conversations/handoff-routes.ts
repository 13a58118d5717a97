import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { getConversation } from '../../conversations/conversations.js';
import { API_PREFIX, keyOwner } from '../../http/auth.js';
import { BadRequest, HttpError, ValidationError } from '../../lib/errors.js';
import { checkIdentity } from '../identity/verify.js';
import { adminProject } from '../projects/access.js';
import { adminErrors, projectParams } from '../projects/admin-schema.js';
import { adminConversationParams, adminConversationWrapped } from './admin-schema.js';
import { toAdminConversation } from './admin-service.js';
import {
  assignBody,
  conversationEventsResponse,
  humanMessageBody,
  humanMessageCreated,
  lastEventIdHeader,
  projectEventsResponse,
} from './handoff-schema.js';
import { askForPerson, postHumanReply, returnToAgent, takeOver } from './handoff-service.js';
import { LiveStreams, streamConversationEvents, streamProjectEvents } from './live-stream.js';
import { conversationIdParams, conversationNotFound, errorSchema, handoffResponse, identityUnauthorized, requestHandoffBody } from './schema.js';
import { toMessage } from './service.js';

const ADMIN_BASE = `${API_PREFIX}/admin/projects/:projectId/conversations`;

/**
 * The dashboard user making the call, as the person who takes over or replies; null for the admin
 * token and secret keys, which name the person in the body.
 */
function sessionPerson(request: FastifyRequest): { id: string; name: string } | null {
  const caller = request.caller;
  return caller?.type === 'user' ? { id: caller.session.user.id, name: caller.session.user.name || caller.session.user.email } : null;
}

/** Reads `Last-Event-ID`: a message position (a non-negative integer), else a validation error. */
function readLastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined || header === '') return undefined;
  const text = Array.isArray(header) ? header[0] : header;
  if (!/^\d{1,15}$/.test(text)) throw ValidationError([{ path: 'Last-Event-ID', message: 'Expected the id of a message event' }]);
  return Number(text);
}

/**
 * Handoff to a person and live events: the end user's request and the conversation's event stream
 * (runtime), a person taking over, replying and handing back, and the project's event stream (admin).
 */
export const handoffRoutes: FastifyPluginAsyncZod = async (app) => {
  const deps = app.deps;
  const db = deps.store.db;
  const streams = new LiveStreams();
  // Open event streams would hold a shutdown up for ever: they end first (clients reconnect elsewhere).
  app.addHook('preClose', async () => streams.endAll());

  app.post(`${API_PREFIX}/chat/conversations/:conversationId/handoff`, {
    config: { auth: 'runtime' },
    schema: {
      tags: ['chat'],
      operationId: 'requestHandoff',
      summary: 'Ask for a person',
      description:
        'Hands the conversation to the support team: from now on the agent does not answer in it (a send stores the message and streams a `data-handoff` part) until a person hands it back. ' +
        'Asking again while waiting or with a person changes nothing. The identity rules of the conversation apply.',
      params: conversationIdParams,
      body: requestHandoffBody,
      response: {
        200: handoffResponse,
        400: errorSchema.describe('The conversation is closed or idle past the TTL (`Conversation expired`), or a validation error.'),
        401: identityUnauthorized,
        404: conversationNotFound,
        409: errorSchema.describe('The project turned handoff off: `{"error":"Handoff is turned off for this project"}`.'),
      },
    },
    handler: async (request) => {
      const owner = keyOwner(request);
      const conv = await getConversation(db, owner.project.id, request.params.conversationId);
      await checkIdentity(request, owner, conv.end_user_external_id ?? null);
      const { state } = await askForPerson(deps, owner.project, conv, { reason: request.body?.reason || null, via: 'user' });
      return { conversationId: conv.id, handoff: state };
    },
  });

  app.get(`${API_PREFIX}/chat/conversations/:conversationId/events`, {
    config: { auth: 'runtime' },
    schema: {
      tags: ['chat'],
      operationId: 'streamConversationEvents',
      summary: "Follow a conversation's messages and handoff live",
      description:
        'A server-sent-event stream of the conversation: every message stored from now on (a person\'s replies, the agent\'s answers, the user\'s messages from another tab), every handoff change, and `closed` when the conversation is closed (at once when it already is), across nodes. ' +
        'Send `Last-Event-ID` (EventSource does on reconnect) to get the messages stored after that event first. The identity rules of the conversation apply.',
      params: conversationIdParams,
      documented: { headers: lastEventIdHeader },
      response: {
        200: conversationEventsResponse,
        401: identityUnauthorized,
        404: conversationNotFound,
      },
    },
    handler: async (request, reply) => {
      const owner = keyOwner(request);
      const lastEventId = readLastEventId(request.headers['last-event-id']);
      const conv = await getConversation(db, owner.project.id, request.params.conversationId);
      await checkIdentity(request, owner, conv.end_user_external_id ?? null);
      // The identity is asked again with the key, against the project as it is now: a rotated HMAC
      // secret, an identity token past its expiry or verification made required ends the stream,
      // as each would refuse the reconnect.
      const stillAllowed = async () => {
        const now = await app.stillAuthorized(request);
        if (now?.type !== 'key') return false;
        try {
          await checkIdentity(request, now.owner, conv.end_user_external_id ?? null);
        } catch (err) {
          if (err instanceof HttpError) return false;
          throw err;
        }
        return true;
      };
      await streamConversationEvents(reply, deps, streams, owner.project, conv, lastEventId, stillAllowed);
    },
  });

  app.post(`${ADMIN_BASE}/:conversationId/assign`, {
    config: { auth: 'admin', permission: 'work' },
    schema: {
      tags: ['conversations'],
      operationId: 'assignConversation',
      summary: 'Take a conversation over',
      description:
        'A person takes the conversation (accepting a request, or taking over from the agent): its handoff becomes `active` with them as assignee, and the agent stops answering in it until it is handed back. Assigning another person reassigns it. ' +
        'A dashboard user assigns it to themselves ("assign to me", no `assignee`); the admin token and secret keys name the person in `assignee`.',
      params: adminConversationParams,
      body: assignBody,
      response: {
        200: adminConversationWrapped,
        400: errorSchema.describe('A validation error, or `assignee` sent by a signed-in dashboard user.'),
        ...adminErrors,
        409: errorSchema.describe('The conversation is closed: `{"error":"Conversation is closed"}`.'),
      },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      // As with replies: a dashboard user acts as themselves, never as a name (and user id) they make up.
      const me = sessionPerson(request);
      if (me && request.body?.assignee) throw BadRequest('A signed-in user takes a conversation as themselves: leave out `assignee`');
      const person = me ?? request.body?.assignee;
      if (!person) throw ValidationError([{ path: 'assignee', message: 'Name the person who takes the conversation' }]);
      const row = await takeOver(deps, project, request.params.conversationId, { id: person.id ?? null, name: person.name });
      return { conversation: toAdminConversation(row, project) };
    },
  });

  app.post(`${ADMIN_BASE}/:conversationId/messages`, {
    config: { auth: 'admin', permission: 'work' },
    schema: {
      tags: ['conversations'],
      operationId: 'postHumanMessage',
      summary: "Reply as a person",
      description:
        "Stores a person's reply as an `assistant` message with `author: {type: \"human\", id, name}` and sends it to the end user's widget live. " +
        'A dashboard user replies as themselves (no `author`); the admin token and secret keys may name the person in `author`. ' +
        'A conversation that was not with a person yet becomes theirs (`active`), so the agent does not answer over them.',
      params: adminConversationParams,
      body: humanMessageBody,
      response: {
        201: humanMessageCreated,
        400: errorSchema.describe('A validation error, or `author` sent by a signed-in dashboard user.'),
        ...adminErrors,
        409: errorSchema.describe('The conversation is closed: `{"error":"Conversation is closed"}`.'),
      },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      // A dashboard user always writes as themselves; a token or a key says who writes.
      const me = sessionPerson(request);
      if (me && request.body.author) throw BadRequest('A signed-in user replies as themselves: leave out `author`');
      const input = me ? { content: request.body.content, author: me } : request.body;
      const { message, conversation } = await postHumanReply(deps, project, request.params.conversationId, input);
      return reply.code(201).send({ message: toMessage(message), conversation: toAdminConversation(conversation, project) });
    },
  });

  app.post(`${ADMIN_BASE}/:conversationId/handback`, {
    config: { auth: 'admin', permission: 'work' },
    schema: {
      tags: ['conversations'],
      operationId: 'handBackConversation',
      summary: 'Hand a conversation back to the agent',
      description:
        "Ends the handoff: the agent answers the next message, with the people's replies in its history. Handing back a conversation that is not handed off changes nothing.",
      params: adminConversationParams,
      response: { 200: adminConversationWrapped, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      const row = await returnToAgent(deps, project, request.params.conversationId);
      return { conversation: toAdminConversation(row, project) };
    },
  });

  app.get(`${API_PREFIX}/admin/projects/:projectId/events`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['conversations'],
      operationId: 'streamProjectEvents',
      summary: "Follow a project's conversations live",
      description: 'A server-sent-event stream for the inbox: which conversation got a message or a handoff change, as it happens, across nodes.',
      params: projectParams,
      response: { 200: projectEventsResponse, ...adminErrors },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      await streamProjectEvents(reply, deps, streams, project.id, async () => (await app.stillAuthorized(request)) !== null);
    },
  });
};
