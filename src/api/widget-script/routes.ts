import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { MediaResponse } from '../../http/openapi.js';
import { acceptsGzip, etagMatches, widgetScriptSource } from './service.js';

/**
 * GET /widget.js: the embeddable widget. The URL is not versioned (site owners paste it once), so
 * browsers may use their copy for five minutes and then revalidate with the ETag (304 when
 * unchanged); a release reaches every page within minutes without anyone editing their snippet.
 */
export const widgetScriptRoutes: FastifyPluginAsync = async (app) => {
  const scriptOf = widgetScriptSource();

  app.get('/widget.js', {
    config: { auth: 'none' },
    schema: {
      tags: ['widget'],
      operationId: 'getWidgetScript',
      summary: 'The embeddable widget script',
      description:
        'Load with a script tag, then call `AnswerDesk.initAsync({apiUrl, apiKey, user?})`. Cached for 5 minutes, then revalidated with the ETag; gzip when accepted. No key.',
      documented: {
        headers: z.object({
          'If-None-Match': z.string().optional().describe('The ETag of a copy the browser holds; 304 when it is current.'),
        }),
      },
      response: {
        200: {
          description: 'The script.',
          headers: { ETag: z.string(), 'Cache-Control': z.string() },
          content: { 'text/javascript': { schema: z.string() } },
        } satisfies MediaResponse,
        304: { description: 'Not modified: the copy named in If-None-Match is current.', headers: { ETag: z.string() } } satisfies MediaResponse,
      },
    },
    handler: async (request, reply) => {
      const script = await scriptOf();
      const gzip = acceptsGzip(request.headers['accept-encoding']);
      const etag = gzip ? script.etag.replace(/"$/, '-gzip"') : script.etag;
      reply
        .header('content-type', 'text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=300, stale-while-revalidate=86400')
        .header('etag', etag)
        .header('vary', 'Accept-Encoding')
        .header('x-content-type-options', 'nosniff')
        // Pages that isolate themselves (COEP) may still load the script from this origin.
        .header('cross-origin-resource-policy', 'cross-origin');
      if (etagMatches(request.headers['if-none-match'], script.etag)) return reply.code(304).send();
      if (gzip) return reply.header('content-encoding', 'gzip').send(script.gzip);
      return reply.send(script.body);
    },
  });
};
