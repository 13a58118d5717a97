import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelRegistry } from './agent/models.js';
import type { Config } from './config.js';
import { createEventBus, type EventBus } from './events/bus.js';
import { createMemoryBus } from './events/memory.js';
import { waitingJobCount } from './knowledge/jobs.js';
import { createKnowledgeRuntime, type KnowledgeRuntime } from './knowledge/runtime.js';
import { createMetrics, type Metrics } from './lib/metrics.js';
import { createTracing, type Tracing } from './lib/tracing.js';
import { LocalEndpoints } from './lib/local-endpoints.js';
import { createRateLimiter, type RateLimiter } from './limits/index.js';
import { openStore, storeOptions, type Store } from './store/index.js';
import { unsettledDeliveryCount } from './webhooks/deliveries.js';

/**
 * What the app's parts reach, built once at boot and passed down; no module keeps a registry of its
 * own. The server, the CLI, the tests and the benchmarks build it the same way (openDeps or
 * createDeps). Long-lived machinery still to come (the events bus) is added here.
 */
export interface AppDeps {
  config: Config;
  store: Store;
  limiter: RateLimiter;
  /** AI SDK model objects by spec, each made once. */
  models: ModelRegistry;
  /** Knowledge search, embedder, document parser, and the wake-up of this process's ingestion workers. */
  knowledge: KnowledgeRuntime;
  /** Prometheus series of this node; no-ops unless ANSWERDESK_METRICS_TOKEN is set. */
  metrics: Metrics;
  /** OpenTelemetry traces; null unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracing: Tracing | null;
  /** This server's own endpoints that actions may call on a loopback address (the demo's order look-up). */
  localEndpoints: LocalEndpoints;
  /** Live events (new messages, handoff changes): in memory, or Redis pub/sub across nodes when REDIS_URL is set. */
  events: EventBus;
}

/** The deps around an open store and rate limiter. */
export function createDeps(
  config: Config,
  store: Store,
  limiter: RateLimiter,
  tracing: Tracing | null = null,
  events: EventBus = createMemoryBus(),
): AppDeps {
  const metrics = createMetrics(config.ANSWERDESK_METRICS_TOKEN !== undefined, {
    queueDepth: () => waitingJobCount(store.db),
    pool: () => store.poolStats(),
    webhookPending: () => unsettledDeliveryCount(store.db),
  });
  return {
    config,
    store,
    limiter,
    models: new ModelRegistry(config),
    knowledge: createKnowledgeRuntime(config, store),
    metrics,
    tracing,
    localEndpoints: new LocalEndpoints(),
    events,
  };
}

/** Opens the infrastructure named by the config (database, rate-limit store) and builds the deps. */
export async function openDeps(config: Config): Promise<AppDeps> {
  const tracing = config.OTEL_EXPORTER_OTLP_ENDPOINT ? await createTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT, config.OTEL_SERVICE_NAME, packageVersion()) : null;
  const dialect = config.DATABASE_URL.startsWith('sqlite:') ? 'sqlite' : 'postgres';
  const onQuery = tracing ? (sqlText: string, ms: number, failed: boolean) => tracing.query(dialect, sqlText, ms, failed) : undefined;
  const store = await openStore(config.DATABASE_URL, { ...storeOptions(config), onQuery });
  try {
    const limiter = await createRateLimiter(config.REDIS_URL, undefined, {
      connectTimeoutMs: config.REDIS_CONNECT_TIMEOUT_MS,
      commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    });
    let events: EventBus;
    try {
      events = await createEventBus(config.REDIS_URL, { connectTimeoutMs: config.REDIS_CONNECT_TIMEOUT_MS });
    } catch (err) {
      await limiter.close();
      throw err;
    }
    return createDeps(config, store, limiter, tracing, events);
  } catch (err) {
    await store.close();
    await tracing?.shutdown();
    throw err;
  }
}

/** The version in package.json, for the spans' service.version. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
}
