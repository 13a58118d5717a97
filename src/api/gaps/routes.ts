import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { API_PREFIX } from '../../http/auth.js';
import { adminProject } from '../projects/access.js';
import { adminErrors, projectParams } from '../projects/admin-schema.js';
import { gapList, gapParams, gapResolved, gapsQuery, gapWrapped, resolveGapBody } from './schema.js';
import { dismiss, listGaps, resolveGap } from './service.js';

const BASE = `${API_PREFIX}/admin/projects/:projectId/gaps`;

/** Admin API for knowledge gaps: what the agent could not answer, answering it, or setting it aside. */
export const gapRoutes: FastifyPluginAsyncZod = async (app) => {
  const deps = app.deps;

  app.get(BASE, {
    config: { auth: 'admin' },
    schema: {
      tags: ['gaps'],
      operationId: 'listGaps',
      summary: 'List knowledge gaps',
      description:
        'Questions of the last `days` days that the agent declined or whose answer was rated NEGATIVE, grouped when they ask the same thing in other words (shared key terms), most frequent first. Dismissed gaps are left out; a resolved one returns only if its question goes unanswered again.',
      params: projectParams,
      querystring: gapsQuery,
      response: { 200: gapList, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { gaps: await listGaps(deps, project, request.query.days) };
    },
  });

  app.post(`${BASE}/:gapId/resolve`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['gaps'],
      operationId: 'resolveGap',
      summary: 'Answer a knowledge gap',
      description:
        "Adds the gap's question with this answer to the project's FAQ source of answers (created on first use; the same question again replaces its answer) and marks the gap resolved. Once the source is indexed, the agent answers the question, and its paraphrases, from that item and cites it.",
      params: gapParams,
      body: resolveGapBody,
      response: { 200: gapResolved, ...adminErrors, 409: adminErrors[404].describe('`Gap already resolved`, or the answers source was deleted three times while the answer went in (`The answers source was deleted meanwhile; try again`; the gap is open again).') },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return resolveGap(deps, project, request.params.gapId, request.body.answer);
    },
  });

  app.post(`${BASE}/:gapId/dismiss`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['gaps'],
      operationId: 'dismissGap',
      summary: 'Dismiss a knowledge gap',
      description: 'Hides the gap for good (a question the help content should not answer). Dismissing it again changes nothing.',
      params: gapParams,
      response: { 200: gapWrapped, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return { gap: await dismiss(deps, project, request.params.gapId) };
    },
  });
};
