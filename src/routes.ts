import type { FastifyPluginAsync } from 'fastify';
import { accountAdminRoutes } from './api/accounts/admin-routes.js';
import { accountRoutes } from './api/accounts/routes.js';
import { actionRoutes } from './api/actions/routes.js';
import { conversationAdminRoutes } from './api/conversations/admin-routes.js';
import { conversationRoutes } from './api/conversations/routes.js';
import { demoRoutes } from './api/demo/routes.js';
import { feedbackRoutes } from './api/feedback/routes.js';
import { healthRoutes } from './api/health/routes.js';
import { identityRoutes } from './api/identity/routes.js';
import { insightRoutes } from './api/insight/routes.js';
import { knowledgeRoutes } from './api/knowledge/routes.js';
import { messageRoutes } from './api/messages/routes.js';
import { metricsRoutes } from './api/metrics/routes.js';
import { projectAdminRoutes } from './api/projects/admin-routes.js';
import { skillRoutes } from './api/skills/routes.js';
import { widgetScriptRoutes } from './api/widget-script/routes.js';
import { widgetRoutes } from './api/widget/routes.js';

/** Every resource's routes. A new resource adds one line here. */
export const routes: FastifyPluginAsync = async (app) => {
  await app.register(healthRoutes);
  await app.register(actionRoutes);
  await app.register(conversationRoutes);
  await app.register(messageRoutes);
  await app.register(feedbackRoutes);
  await app.register(projectAdminRoutes);
  await app.register(skillRoutes);
  await app.register(conversationAdminRoutes);
  await app.register(insightRoutes);
  await app.register(knowledgeRoutes);
  await app.register(identityRoutes);
  await app.register(widgetScriptRoutes);
  await app.register(demoRoutes);
  await app.register(widgetRoutes);
  await app.register(accountRoutes);
  await app.register(accountAdminRoutes);
  await app.register(metricsRoutes);
};
