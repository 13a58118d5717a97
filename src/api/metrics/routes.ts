import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorSchema } from '../../http/error-schemas.js';
import type { MediaResponse } from '../../http/openapi.js';
import { NotFound, Unauthorized } from '../../lib/errors.js';
import { metricsAuthorized } from '../../lib/metrics.js';

/**
 * GET /metrics: the node's Prometheus series. Off (404, as if there were no such route) unless
 * ANSWERDESK_METRICS_TOKEN is set; then only for `Authorization: Bearer <that token>`. Not an API
 * key: a scraper's credential opens nothing else.
 */
export const metricsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/metrics', {
    config: { auth: 'none' },
    schema: {
      tags: ['metrics'],
      operationId: 'getMetrics',
      summary: 'Prometheus metrics',
      description:
        'The node\'s series in the Prometheus text format: Node defaults (CPU, memory, GC, event-loop lag), `http_request_duration_seconds` by route, method and status, and `answerdesk_*` (answers, tokens, tool calls, rate-limit rejections, open streams, knowledge queue and jobs, database pool, webhook deliveries). ' +
        'Only when `ANSWERDESK_METRICS_TOKEN` is set, with `Authorization: Bearer <token>`; otherwise 404.',
      response: {
        200: {
          description: 'The series, one node\'s view (scrape every node).',
          content: { 'text/plain': { schema: z.string().describe('Prometheus text exposition format 0.0.4.') } },
        } satisfies MediaResponse,
        401: errorSchema.describe('No `Authorization: Bearer` header, or not the metrics token: `{"error":"Unauthorized"}`.'),
        404: errorSchema.describe('Metrics are off (no `ANSWERDESK_METRICS_TOKEN`): `{"error":"Not found"}`.'),
      },
    },
    handler: async (request, reply) => {
      const token = app.deps.config.ANSWERDESK_METRICS_TOKEN;
      if (!token) throw NotFound('Not found');
      if (!metricsAuthorized(request.headers.authorization, token)) throw Unauthorized();
      const { contentType, body } = await app.deps.metrics.scrape();
      return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
    },
  });
};
