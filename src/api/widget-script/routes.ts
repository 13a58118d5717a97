import type { FastifyPluginAsync } from 'fastify';
import { acceptsGzip, etagMatches, widgetScriptSource } from './service.js';

/**
 * GET /widget.js: the embeddable widget. The URL is not versioned (site owners paste it once), so
 * browsers may use their copy for five minutes and then revalidate with the ETag (304 when
 * unchanged); a release reaches every page within minutes without anyone editing their snippet.
 */
export const widgetScriptRoutes: FastifyPluginAsync = async (app) => {
  const scriptOf = widgetScriptSource();

  app.get('/widget.js', {
    config: { public: true },
    schema: { tags: ['widget'], summary: 'The embeddable widget script', description: 'Load with a script tag, then call AnswerDesk.initAsync({apiUrl, apiKey, user?}).' },
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
