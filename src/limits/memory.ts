import { RateLimiterMemory } from 'rate-limiter-flexible';
import { limiterFamily, WINDOW_SECONDS, type RateLimiter } from './limiter.js';

/** Counts in this process only: right for one node, wrong behind a load balancer. */
export function createMemoryLimiter(): RateLimiter {
  return limiterFamily(
    'memory',
    (keyPrefix, points) => new RateLimiterMemory({ keyPrefix, points, duration: WINDOW_SECONDS }),
    { async ping() {}, onFallback: () => () => {}, async close() {} },
  );
}
