import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { limiterFamily, WINDOW_SECONDS, type RateLimiter } from './index.js';

/** Counts in Redis, so every node behind a load balancer sees one count per key. */
export async function createRedisLimiter(url: string, prefix: string): Promise<RateLimiter> {
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
  // A Redis outage must not crash the node; requests fail with 500 and /ready reports it.
  client.on('error', () => {});
  await client.connect();
  return limiterFamily(
    'redis',
    (keyPrefix, points) =>
      new RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${prefix}:${keyPrefix}`,
        points,
        duration: WINDOW_SECONDS,
        rejectIfRedisNotReady: true,
      }),
    {
      async ping() {
        await client.ping();
      },
      async close() {
        client.disconnect();
      },
    },
  );
}
