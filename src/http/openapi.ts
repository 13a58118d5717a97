import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { API_PREFIX } from './auth.js';

/**
 * The OpenAPI 3.1 document is generated from the same zod schemas that validate requests and
 * serialize responses, so it cannot drift from the code. /docs serves Swagger UI from the package's
 * own files (no CDN).
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'AnswerDesk API',
        version: '1.0.0',
        description:
          'Runtime API of the AnswerDesk support agent (chat, identity, feedback, widget configuration) and its admin API.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
      tags: [
        { name: 'chat', description: 'Conversations, messages and feedback' },
        { name: 'identity', description: 'End-user identity verification' },
        { name: 'widget', description: 'Widget configuration' },
        { name: 'admin', description: 'Projects, keys, skills, knowledge, actions and conversations' },
      ],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
    hiddenTag: 'internal',
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    staticCSP: true,
  });
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
}
