import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { API_PREFIX, keyOwner } from '../../http/auth.js';
import type { MediaResponse } from '../../http/openapi.js';
import { widgetConfigSchema } from './schema.js';
import { ifNoneMatchHits, widgetConfigSource, type SerializedConfig } from './service.js';

const etagHeader = { ETag: z.string().describe('Names this version of the configuration; send it back as If-None-Match.') };

/** The config, or 304 when the client's copy (If-None-Match) is current. */
function sendConfig(ifNoneMatch: string | undefined, { body, etag }: SerializedConfig, reply: FastifyReply): void {
  // The browser keeps the copy but asks every time, so edits show on the next page load.
  reply.header('etag', etag).header('cache-control', 'no-cache');
  if (ifNoneMatchHits(ifNoneMatch, etag)) {
    reply.code(304).send();
    return;
  }
  // Already serialized (settings are validated on write): a Buffer body skips the serializer, the
  // bytes sent are exactly the bytes the ETag names, and its length is known without counting.
  reply.type('application/json; charset=utf-8').send(body);
}

/** GET /widget/config: the merged widget configuration, with ETag / If-None-Match revalidation. */
export const widgetRoutes: FastifyPluginAsyncZod = async (app) => {
  const configOf = widgetConfigSource(app.deps.store.db, app.caches.create());

  app.get(`${API_PREFIX}/widget/config`, {
    config: { auth: 'runtime' },
    schema: {
      tags: ['widget'],
      operationId: 'getWidgetConfig',
      summary: 'Read the widget configuration',
      description: "Defaults merged with the project's widget settings, plus its enabled skills. Sends an ETag; If-None-Match gives 304.",
      documented: {
        headers: z.object({
          'If-None-Match': z.string().optional().describe('The ETag of a copy the client holds; 304 when it is current.'),
        }),
      },
      response: {
        // Sent pre-serialized (the bytes the ETag names), so this entry only documents it.
        200: {
          description: 'The widget configuration.',
          headers: etagHeader,
          content: { 'application/json': { schema: widgetConfigSchema } },
        } satisfies MediaResponse,
        304: { description: 'Not modified: the copy named in If-None-Match is current.', headers: etagHeader } satisfies MediaResponse,
      },
    },
    handler: (request, reply) => {
      const config = configOf(keyOwner(request).project);
      // Synchronous when the config is cached (nearly always): no promise, no extra tick.
      if (config instanceof Promise) return config.then((c) => void sendConfig(request.headers['if-none-match'], c, reply));
      sendConfig(request.headers['if-none-match'], config, reply);
    },
  });
};
