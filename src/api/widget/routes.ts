import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { API_PREFIX, keyOwner } from '../../http/auth.js';
import { errorSchema } from '../conversations/schema.js';
import { widgetConfigSchema, type WidgetConfig } from './schema.js';
import { ifNoneMatchHits, widgetConfigSource } from './service.js';

/** GET /widget/config: the merged widget configuration, with ETag / If-None-Match revalidation. */
export const widgetRoutes: FastifyPluginAsyncZod = async (app) => {
  const configOf = widgetConfigSource(app.deps.store.db, app.caches.create());

  app.get(`${API_PREFIX}/widget/config`, {
    schema: {
      tags: ['widget'],
      summary: 'Read the widget configuration',
      description: "Defaults merged with the project's widget settings, plus its enabled skills. Sends an ETag; If-None-Match gives 304.",
      response: {
        200: widgetConfigSchema,
        304: z.undefined().describe('Not modified: the copy named in If-None-Match is current.'),
        401: errorSchema,
        403: errorSchema,
        429: errorSchema,
      },
    },
    handler: async (request, reply) => {
      const { body, etag } = await configOf(keyOwner(request).project);
      // The browser keeps the copy but asks every time, so edits show on the next page load.
      reply.header('etag', etag).header('cache-control', 'no-cache');
      if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
      // Already serialized (settings are validated on write): a string body skips the serializer,
      // and the bytes sent are exactly the bytes the ETag names.
      return reply.type('application/json; charset=utf-8').send(body as unknown as WidgetConfig);
    },
  });
};
