import type { FastifyInstance } from 'fastify';

/**
 * Times every request into `http_request_duration_seconds`, labelled with the route pattern the
 * router matched (`/api/v1/chat/conversations/:id`, never the URL itself, so ids and probing paths
 * cannot grow the series) or `unmatched`. Measured to the moment the response closes, so an answer
 * stream counts for as long as it streams. Nothing is registered when metrics are off.
 */
export function registerHttpMetrics(app: FastifyInstance): void {
  const metrics = app.deps.metrics;
  if (!metrics.enabled) return;
  app.addHook('onRequest', async (request, reply) => {
    const started = performance.now();
    reply.raw.once('close', () => {
      const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
      metrics.httpRequest(route, request.method, reply.raw.statusCode, (performance.now() - started) / 1000);
    });
  });
}
