import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { API_PREFIX } from '../../http/auth.js';
import { adminProject } from '../projects/access.js';
import { adminErrors, projectParams } from '../projects/admin-schema.js';
import { projectQuestionTerms } from '../gaps/service.js';
import { activityFeed as activityFeedSchema, activityQuery, analyticsQuery, analyticsSchema } from './schema.js';
import { activityFeed, projectAnalytics } from './service.js';

const BASE = `${API_PREFIX}/admin/projects/:projectId`;

/** Admin insight: the live activity feed the dashboard polls, and analytics counts. */
export const insightRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = app.deps.store.db;

  app.get(`${BASE}/activity`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['insight'],
      operationId: 'getActivityFeed',
      summary: 'Activity feed',
      description:
        'Messages written since the previous poll, oldest first, at most `limit` (the newest when more arrived). Poll with `after=nextCursor`; the dashboard polls every 2 s. Messages show up about 1 s after they are written.',
      params: projectParams,
      querystring: activityQuery,
      response: { 200: activityFeedSchema, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return activityFeed(db, project.id, request.query);
    },
  });

  app.get(`${BASE}/analytics`, {
    config: { auth: 'admin' },
    schema: {
      tags: ['insight'],
      operationId: 'getAnalytics',
      summary: 'Analytics',
      description: 'Conversation, message and feedback counts over the last `days` UTC days, with a per-day series.',
      params: projectParams,
      querystring: analyticsQuery,
      response: { 200: analyticsSchema, ...adminErrors },
    },
    handler: async (request) => {
      const project = await adminProject(request, request.params.projectId);
      return projectAnalytics(db, project, request.query.days, await projectQuestionTerms(app.deps, project.id));
    },
  });
};
