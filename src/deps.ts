import { ModelRegistry } from './agent/models.js';
import type { Config } from './config.js';
import { waitingJobCount } from './knowledge/jobs.js';
import { createKnowledgeRuntime, type KnowledgeRuntime } from './knowledge/runtime.js';
import { createMetrics, type Metrics } from './lib/metrics.js';
import { createRateLimiter, type RateLimiter } from './limits/index.js';
import { openStore, storeOptions, type Store } from './store/index.js';

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
}

/** The deps around an open store and rate limiter. */
export function createDeps(config: Config, store: Store, limiter: RateLimiter): AppDeps {
  const metrics = createMetrics(config.ANSWERDESK_METRICS_TOKEN !== undefined, {
    queueDepth: () => waitingJobCount(store.db),
    pool: () => store.poolStats(),
  });
  return { config, store, limiter, models: new ModelRegistry(config), knowledge: createKnowledgeRuntime(config, store), metrics };
}

/** Opens the infrastructure named by the config (database, rate-limit store) and builds the deps. */
export async function openDeps(config: Config): Promise<AppDeps> {
  const store = await openStore(config.DATABASE_URL, storeOptions(config));
  try {
    const limiter = await createRateLimiter(config.REDIS_URL, undefined, {
      connectTimeoutMs: config.REDIS_CONNECT_TIMEOUT_MS,
      commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    });
    return createDeps(config, store, limiter);
  } catch (err) {
    await store.close();
    throw err;
  }
}
