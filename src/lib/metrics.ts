import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { safeEqual } from './keys.js';

/** Where a gauge that is read at scrape time gets its value. */
export interface MetricSources {
  /** Knowledge jobs waiting for a worker (queued, or running under an expired lease). */
  queueDepth?: () => Promise<number>;
  /** Database pool: connections open, idle and callers waiting for one (PostgreSQL only). */
  pool?: () => { total: number; idle: number; waiting: number } | null;
  /** Webhook deliveries not yet settled (pending or being sent), all nodes together. */
  webhookPending?: () => Promise<number>;
}

/**
 * What one webhook delivery came to on this node: `success` (2xx), `retry` (the attempt failed and
 * another is scheduled), `failed` (the last attempt failed, or the endpoint answered 410), `dropped`
 * (not sent: the endpoint was turned off while it waited).
 */
export type WebhookDeliveryStatus = 'success' | 'retry' | 'failed' | 'dropped';

/** Outcome of one tool call as the answer stream reports it. */
export type ToolCallStatus = 'ok' | 'error' | 'http_error';

/**
 * The node's Prometheus series, one registry per app instance (kept on AppDeps, never at module
 * level, so two apps in one process count apart). With metrics off every method is a no-op and no
 * collector runs: the request path pays nothing for a feature nobody can scrape.
 */
export interface Metrics {
  readonly enabled: boolean;
  /** One HTTP request: `route` is the matched route pattern (`unmatched` when none). */
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** One answer stream: time to the first text, whole duration, its outcome (answered, declined, action, error) and the model's finish reason. */
  answer(a: { ttfbSeconds: number | null; durationSeconds: number; outcome: string; finishReason: string }): void;
  modelTokens(projectId: string, model: string, inputTokens: number, outputTokens: number): void;
  toolCall(kind: 'knowledge' | 'action', status: ToolCallStatus): void;
  rateLimited(bucket: string): void;
  /** An answer started; call the returned function once when it has ended and been stored. */
  streamOpened(): () => void;
  knowledgeJob(outcome: string, seconds: number): void;
  /** One webhook delivery attempt (or a dropped delivery: `seconds` null) by event type; never the endpoint or project. */
  webhookDelivery(event: string, status: WebhookDeliveryStatus, seconds: number | null): void;
  /** The text exposition of every series (and its content type). */
  scrape(): Promise<{ contentType: string; body: string }>;
}

const noop = () => {};

const disabled: Metrics = {
  enabled: false,
  httpRequest: noop,
  answer: noop,
  modelTokens: noop,
  toolCall: noop,
  rateLimited: noop,
  streamOpened: () => noop,
  knowledgeJob: noop,
  webhookDelivery: noop,
  scrape: async () => ({ contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '' }),
};

/** Seconds buckets for answers: the first token within tens of milliseconds, whole answers up to minutes. */
const ANSWER_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds buckets for a webhook attempt: a local receiver in milliseconds, up to the 15 s budget. */
const WEBHOOK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];
const JOB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** The metrics of one app: real series when `enabled`, else the no-op form. */
export function createMetrics(enabled: boolean, sources: MetricSources = {}): Metrics {
  if (!enabled) return disabled;
  const registry = new Registry();
  // Node's own series: CPU, memory, heap, GC, handles, and nodejs_eventloop_lag_* (event-loop lag).
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const http = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by matched route pattern, method and status; answer streams count until their response ends.',
    labelNames: ['route', 'method', 'status'],
    buckets: HTTP_BUCKETS,
    registers,
  });
  const ttfb = new Histogram({
    name: 'answerdesk_answer_ttfb_seconds',
    help: 'From the send request to the first text of the answer.',
    buckets: ANSWER_BUCKETS,
    registers,
  });
  const duration = new Histogram({
    name: 'answerdesk_answer_duration_seconds',
    help: 'From the send request to the end of the answer stream, by outcome.',
    labelNames: ['outcome'],
    buckets: ANSWER_BUCKETS,
    registers,
  });
  const answers = new Counter({
    name: 'answerdesk_answers_total',
    help: 'Answers by stored outcome (answered, declined, action, error) and the model\'s finish reason.',
    labelNames: ['outcome', 'finish_reason'],
    registers,
  });
  const tokens = new Counter({
    name: 'answerdesk_model_tokens_total',
    help: 'Model tokens by project, model spec and direction (input or output).',
    labelNames: ['project', 'model', 'type'],
    registers,
  });
  const tools = new Counter({
    name: 'answerdesk_tool_calls_total',
    help: 'Tool calls in answers by kind (knowledge search or action) and status (ok, error: the call failed, http_error: the action endpoint answered 4xx/5xx).',
    labelNames: ['kind', 'status'],
    registers,
  });
  const rejected = new Counter({
    name: 'answerdesk_rate_limit_rejections_total',
    help: 'Requests refused with 429 by bucket.',
    labelNames: ['bucket'],
    registers,
  });
  const streams = new Gauge({ name: 'answerdesk_open_streams', help: 'Answers in progress on this node: streaming, or being finished and stored for a client that left.', registers });
  const jobs = new Histogram({
    name: 'answerdesk_knowledge_job_duration_seconds',
    help: 'Knowledge ingestion jobs run on this node, by outcome (done, failed, requeued, lease_lost, interrupted).',
    labelNames: ['outcome'],
    buckets: JOB_BUCKETS,
    registers,
  });
  const hooks = new Counter({
    name: 'answerdesk_webhook_deliveries_total',
    help: 'Webhook deliveries attempted on this node by event type and status (success, retry: failed and scheduled again, failed: last attempt failed or 410 Gone, dropped: endpoint turned off before it was sent).',
    labelNames: ['event', 'status'],
    registers,
  });
  const hookDuration = new Histogram({
    name: 'answerdesk_webhook_delivery_duration_seconds',
    help: 'Webhook delivery attempts on this node, from the request to its response (or failure), by status (success, retry, failed).',
    labelNames: ['status'],
    buckets: WEBHOOK_BUCKETS,
    registers,
  });
  if (sources.webhookPending) {
    const pending = sources.webhookPending;
    new Gauge({
      name: 'answerdesk_webhook_deliveries_pending',
      help: 'Webhook deliveries not yet settled (waiting for their attempt or a retry, or being sent), all nodes together (read from the database at scrape time; -1 when it does not answer).',
      registers,
      async collect() {
        this.set(await pending().catch(() => -1));
      },
    });
  }
  if (sources.queueDepth) {
    const depth = sources.queueDepth;
    new Gauge({
      name: 'answerdesk_knowledge_queue_depth',
      help: 'Knowledge jobs waiting for a worker, all nodes together (read from the database at scrape time; -1 when it does not answer).',
      registers,
      async collect() {
        this.set(await depth().catch(() => -1));
      },
    });
  }
  // The pool as the scrape found it: read before the collectors above query the database, since
  // their own queries, queued for a connection at that moment, would count as callers waiting.
  let poolAtScrape: ReturnType<NonNullable<MetricSources['pool']>> = null;
  if (sources.pool) {
    new Gauge({
      name: 'answerdesk_db_pool_connections',
      help: 'Database pool of this node: connections by state (total, idle, in_use) and callers waiting for one (waiting).',
      labelNames: ['state'],
      registers,
      collect() {
        const stats = poolAtScrape;
        if (!stats) return;
        this.set({ state: 'total' }, stats.total);
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'in_use' }, stats.total - stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
      },
    });
  }

  return {
    enabled: true,
    httpRequest: (route, method, status, seconds) => http.observe({ route, method, status: String(status) }, seconds),
    answer(a) {
      if (a.ttfbSeconds !== null) ttfb.observe(a.ttfbSeconds);
      duration.observe({ outcome: a.outcome }, a.durationSeconds);
      answers.inc({ outcome: a.outcome, finish_reason: a.finishReason });
    },
    modelTokens(project, model, input, output) {
      if (input > 0) tokens.inc({ project, model, type: 'input' }, input);
      if (output > 0) tokens.inc({ project, model, type: 'output' }, output);
    },
    toolCall: (kind, status) => tools.inc({ kind, status }),
    rateLimited: (bucket) => rejected.inc({ bucket }),
    streamOpened() {
      streams.inc();
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        streams.dec();
      };
    },
    knowledgeJob: (outcome, seconds) => jobs.observe({ outcome }, seconds),
    webhookDelivery(event, status, seconds) {
      hooks.inc({ event, status });
      if (seconds !== null) hookDuration.observe({ status }, seconds);
    },
    async scrape() {
      poolAtScrape = sources.pool?.() ?? null;
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/**
 * Whether an `Authorization` header carries `Bearer <token>`. Compared in constant time (hashes of
 * both sides), so the time taken tells nothing about how much of the token was right.
 */
export function metricsAuthorized(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match !== null && safeEqual(match[1]!, token);
}

/**
 * GET /metrics on a port of its own (METRICS_PORT), for a scraper on a monitoring network that
 * should not reach the API. Same token as the API's /metrics; anything else answers 404.
 */
export async function serveMetrics(metrics: Metrics, token: string, port: number, host: string): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const send = (status: number, body: string, type = 'application/json; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) return send(404, JSON.stringify({ error: 'Not found' }));
    if (!metricsAuthorized(req.headers.authorization, token)) return send(401, JSON.stringify({ error: 'Unauthorized' }));
    metrics.scrape().then(
      ({ contentType, body }) => send(200, req.method === 'HEAD' ? '' : body, contentType),
      () => send(500, JSON.stringify({ error: 'Internal server error' })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
