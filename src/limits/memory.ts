import { RateLimiterMemory } from 'rate-limiter-flexible';
import { limiterFamily, type RateLimiter } from './limiter.js';

/** Counts in this process only: right for one node, wrong behind a load balancer. */
export function createMemoryLimiter(): RateLimiter {
  return limiterFamily(
    'memory',
    (keyPrefix, points, duration) => new RateLimiterMemory({ keyPrefix, points, duration }),
    { async ping() {}, onFallback: () => () => {}, async close() {} },
  );
}
