import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';

/** Probes and scrapes, every few seconds from every load balancer and Prometheus: not traced. */
const UNTRACED = new Set(['/health', '/ready', '/metrics']);

/**
 * One server span per request, made the active context for everything the request runs (auth,
 * handler, the answer and its model and tool calls, database statements), named by the matched
 * route pattern once known and ended when the response closes (an answer stream: when it ends).
 * Registered first, so every other hook runs inside it. Nothing is registered without tracing.
 */
export function registerTracing(app: FastifyInstance): void {
  const tracing = app.deps.tracing;
  if (!tracing) return;
  app.addHook('onRequest', (request, reply, done) => {
    const path = request.url.split('?', 1)[0]!;
    if (UNTRACED.has(path)) return done();
    const span = tracing.tracer.startSpan(request.method, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': request.method, 'url.path': path.slice(0, 512), 'answerdesk.request_id': request.id },
    });
    reply.raw.once('close', () => {
      const route = request.is404 ? undefined : request.routeOptions.url;
      if (route) {
        span.updateName(`${request.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      const status = reply.raw.statusCode;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500 || !reply.raw.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(context.active(), span), done);
  });
}
