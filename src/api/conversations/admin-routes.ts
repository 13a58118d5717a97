import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { API_PREFIX } from '../../http/auth.js';
import { adminProject } from '../projects/access.js';
import { adminErrors, projectParams } from '../projects/admin-schema.js';
import {
  adminConversationDetail,
  adminConversationList,
  adminConversationParams,
  adminConversationsQuery,
  adminConversationWrapped,
} from './admin-schema.js';
import { closeAdminConversation, listAdminConversations, readAdminConversation } from './admin-service.js';

const BASE = `${API_PREFIX}/admin/projects/:projectId/conversations`;

/** Admin API for conversations: list with filters, read with messages and feedback, close. */
export const conversationAdminRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;

  app.get(BASE, {
    config: { auth: 'admin' },
    schema: {
      tags: ['conversations'],
      operationId: 'listProjectConversations',
      summary: "List a project's conversations",
      description: 'Most recently updated first, with the end user of each; filters combine with AND; cursor paging.',
      params: projectParams,
      querystring: adminConversationsQuery,
      response: { 200: adminConversationList, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      const { status, userId, endUserId, from, to, includeEmpty, feedback, handoff, limit, cursor } = request.query;
      return listAdminConversations(
        db,
        project,
        { status, externalUserId: userId, endUserId, from, to, includeEmpty: includeEmpty === 'true', feedback, handoff },
        { limit, cursor },
      );
    },
  });

  app.get(`${BASE}/:conversationId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['conversations'],
      operationId: 'getProjectConversation',
      summary: 'Read a conversation',
      description: 'The conversation with its end user, every message (oldest first; regenerated answers with every version) and its feedback.',
      params: adminConversationParams,
      response: { 200: adminConversationDetail, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return readAdminConversation(db, project, request.params.conversationId);
    },
  });

  app.post(`${BASE}/:conversationId/close`, {
    config: { auth: 'admin', permission: 'work' },
    schema: {
      tags: ['conversations'],
      operationId: 'closeConversation',
      summary: 'Close a conversation',
      description: 'Sets status CLOSED; sending into it then answers 400 "Conversation expired". Closing twice is harmless.',
      params: adminConversationParams,
      response: { 200: adminConversationWrapped, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { conversation: await closeAdminConversation(db, project, request.params.conversationId, request.server.deps.events) };
    },
  });
};
