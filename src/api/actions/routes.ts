import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { deleteAction, loadAction } from '../../actions/actions.js';
import { executeAction } from '../../actions/execute.js';
import { secretBox } from '../../lib/secret-box.js';
import { API_PREFIX } from '../../http/auth.js';
import { adminProject } from '../projects/access.js';
import { adminError, adminErrors, projectParams } from '../projects/admin-schema.js';
import {
  actionCallList,
  actionList,
  actionParams,
  actionWrapped,
  createActionBody,
  listCallsQuery,
  patchActionBody,
  testActionBody,
  testActionResult,
} from './schema.js';
import { createAction, getAction, listActionCalls, listActions, updateAction } from './service.js';

const BASE = `${API_PREFIX}/admin/projects/:projectId/actions`;

/**
 * Admin API for custom actions: the project's own HTTP endpoints the agent may call. Secret header
 * values are write-only; a test run shows the request made and the response received, masked.
 */
export const actionRoutes: FastifyPluginAsyncZod = async (app) => {
  const { store, config } = app.deps;
  const db = store.db;
  const box = () => secretBox(config);
  const guard = { allowPrivateNetwork: config.ANSWERDESK_ALLOW_PRIVATE_NETWORK };

  app.post(BASE, {
    config: { auth: 'admin' },
    schema: {
      tags: ['actions'],
      operationId: 'createAction',
      summary: 'Create an action',
      description: 'Validates the URL template, parameters schema and headers; secret header values are encrypted at rest and never shown again.',
      params: projectParams,
      body: createActionBody,
      response: { 201: actionWrapped, ...adminErrors, 409: adminError.describe('An action with this name already exists in the project.') },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      return reply.code(201).send({ action: await createAction(db, box(), project.id, request.body, guard) });
    },
  });

  app.get(BASE, {
    config: { auth: 'admin' },
    schema: {
      tags: ['actions'],
      operationId: 'listActions',
      summary: 'List actions',
      description: 'The project’s actions, oldest first; secret header values read as the mask.',
      params: projectParams,
      response: { 200: actionList, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { actions: await listActions(db, project.id) };
    },
  });

  app.get(`${BASE}/:actionId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['actions'],
      operationId: 'getAction',
      summary: 'Read an action',
      description: 'One action; secret header values read as the mask.',
      params: actionParams,
      response: { 200: actionWrapped, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { action: await getAction(db, project.id, request.params.actionId) };
    },
  });

  app.patch(`${BASE}/:actionId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['actions'],
      operationId: 'updateAction',
      summary: 'Update an action',
      description: 'Fields given replace the stored ones; `headers` replaces the whole set.',
      params: actionParams,
      body: patchActionBody,
      response: { 200: actionWrapped, ...adminErrors, 409: adminError.describe('Another action already has this name.') },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { action: await updateAction(db, box(), project.id, request.params.actionId, request.body, guard) };
    },
  });

  app.delete(`${BASE}/:actionId`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['actions'],
      operationId: 'deleteAction',
      summary: 'Delete an action',
      description: 'Deletes the action and its call log; the agent stops offering it at once.',
      params: actionParams,
      response: { 204: z.null().describe('Deleted.'), ...adminErrors },
    },
    handler: async (request, reply) => {
      const project = await adminProject(request, request.params.projectId);
      await deleteAction(db, project.id, request.params.actionId);
      return reply.code(204).send(null);
    },
  });

  app.post(`${BASE}/:actionId/test`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['actions'],
      operationId: 'testAction',
      summary: 'Call an action once with given arguments',
      description:
        'Makes the real request (also for a disabled action) and returns it with the response; secret headers and user tokens are masked. Recorded in the call log as a test.',
      params: actionParams,
      body: testActionBody,
      response: { 200: testActionResult, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      const action = await loadAction(db, box(), project.id, request.params.actionId);
      const body = request.body ?? { arguments: {}, userTokens: {} };
      return executeAction(action, body.arguments, {
        config,
        db,
        source: 'test',
        requestId: request.id,
        identity: {
          userTokens: body.userTokens,
          endUser: body.endUserId ? { externalId: body.endUserId, verified: true } : null,
        },
        log: request.log,
        localEndpoints: app.deps.localEndpoints,
      });
    },
  });

  app.get(`${BASE}/:actionId/calls`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['actions'],
      operationId: 'listActionCalls',
      summary: "An action's call log",
      description: 'Time, outcome, HTTP status, latency and error of each call; never arguments, headers or bodies.',
      params: actionParams,
      querystring: listCallsQuery,
      response: { 200: actionCallList, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return listActionCalls(db, project.id, request.params.actionId, request.query);
    },
  });
};
