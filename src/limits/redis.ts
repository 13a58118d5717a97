import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { redisConnectFailure } from '../lib/redis-connect.js';
import { limiterFamily, type FallbackEvent, type RateLimiter, type RedisOptions } from './limiter.js';

/** While Redis stays away, the fallback warning is repeated at most this often. */
const WARN_EVERY_MS = 60_000;

/**
 * Counts in Redis, so every node behind a load balancer sees one count per key. When Redis does not
 * answer (refused, cut, or silent past the command timeout), each call is counted in this node's
 * memory instead, through rate-limiter-flexible's `insuranceLimiter`: limits still hold per node
 * and requests are served, rather than every request failing during the outage. /ready reports
 * Redis down all the same.
 */
export async function createRedisLimiter(url: string, prefix: string, options: RedisOptions = {}): Promise<RateLimiter> {
  const client = new Redis(url, {
    // No queue while disconnected: a call fails at once and falls back instead of waiting.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // A call that timed out was already counted in memory: sending it again after reconnecting
    // would count it twice.
    autoResendUnfulfilledCommands: false,
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    commandTimeout: options.commandTimeoutMs ?? 1000,
  });
  const listeners = new Set<(event: FallbackEvent) => void>();
  const emit = (event: FallbackEvent) => {
    for (const listener of listeners) listener(event);
  };
  let lastError: string | undefined;
  let degradedSince = 0;
  let warnedAt = 0;
  // Connection errors are expected during an outage (the client keeps reconnecting); they must not
  // crash the node. They are reported through the fallback event, once a minute at most.
  let lastErrorEvent: Error | undefined;
  client.on('error', (err: Error) => {
    lastError = err.message;
    lastErrorEvent = err;
  });
  client.on('ready', () => {
    if (!degradedSince) return;
    degradedSince = 0;
    emit({ type: 'restored' });
  });
  const fellBack = () => {
    // A command timed out on a connection that looks ready: the server went silent. Dropping that
    // connection makes the next calls fall back at once (the client is not ready) instead of each
    // waiting for the timeout, and the client reconnects until Redis answers. Destroyed, not ended:
    // a polite close would wait for a peer that does not answer.
    if (client.status === 'ready' && !client.stream.destroyed) client.stream.destroy();
    const at = Date.now();
    degradedSince ||= at;
    if (at - warnedAt < WARN_EVERY_MS) return;
    warnedAt = at;
    emit({ type: 'fallback', status: client.status, error: lastError });
  };

  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw redisConnectFailure(url, lastErrorEvent ?? err);
  }
  return limiterFamily(
    'redis',
    (keyPrefix, points, duration) =>
      new RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${prefix}:${keyPrefix}`,
        points,
        duration,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new FallbackLimiter({ keyPrefix, points, duration }, fellBack),
      }),
    {
      async ping() {
        await client.ping();
      },
      onFallback(listener) {
        listeners.add(listener);
        return () => void listeners.delete(listener);
      },
      async close() {
        client.disconnect();
      },
    },
  );
}

/** The in-memory insurance limiter, which says when it is used. */
class FallbackLimiter extends RateLimiterMemory {
  constructor(
    options: ConstructorParameters<typeof RateLimiterMemory>[0],
    private readonly used: () => void,
  ) {
    super(options);
  }

  override consume(key: string | number, points?: number, options?: { [key: string]: unknown }) {
    this.used();
    return super.consume(key, points, options);
  }
}
