import { context, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';

/**
 * OpenTelemetry traces of one app, exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set:
 * a span per request, with the AI SDK's model-call and tool-call spans and one span per database
 * statement as its descendants. Kept on AppDeps like the metrics. The SDK is loaded only when an
 * endpoint is configured; without one there is no tracer, no hook and no context manager.
 *
 * Spans carry ids, routes, statuses, sizes and SQL text (parameterised: no values), never a
 * message, a prompt, a tool's arguments or output, or a header.
 */
export interface Tracing {
  tracer: Tracer;
  /** A database statement that has just finished, as a child of the active span (none outside a request or job). */
  query(dialect: string, sqlText: string, durationMs: number, failed: boolean): void;
  /** Sends what is still buffered and stops. */
  shutdown(): Promise<void>;
}

/** Starts the exporter and the async-context propagation (process-wide, as OpenTelemetry requires). */
export async function createTracing(endpoint: string, serviceName: string, serviceVersion: string): Promise<Tracing> {
  const [{ AsyncLocalStorageContextManager }, { OTLPTraceExporter }, { resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.version': serviceVersion }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  // Parent spans follow the request through awaits (the AI SDK's spans find the request's this way).
  // The context manager is OpenTelemetry's one process-wide piece; a second app in the process reuses it.
  const manager = new AsyncLocalStorageContextManager().enable();
  const installed = context.setGlobalContextManager(manager);
  if (!installed) manager.disable();
  const tracer = provider.getTracer('answerdesk', serviceVersion);
  return {
    tracer,
    query(dialect, sqlText, durationMs, failed) {
      const parent = context.active();
      if (!trace.getSpan(parent)) return;
      const operation = /^\s*(\w+)/.exec(sqlText)?.[1]?.toLowerCase() ?? 'query';
      const end = Date.now();
      const span = tracer.startSpan(
        `db ${operation}`,
        {
          kind: SpanKind.CLIENT,
          startTime: end - durationMs,
          attributes: { 'db.system.name': dialect === 'postgres' ? 'postgresql' : 'sqlite', 'db.operation.name': operation, 'db.query.text': sqlText.slice(0, 2000) },
        },
        parent,
      );
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(end);
    },
    async shutdown() {
      await provider.shutdown();
      if (installed) {
        manager.disable();
        context.disable();
      }
    },
  };
}
